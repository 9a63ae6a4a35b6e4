import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig
import RefreshdDaemon

/// `why` on the shipped jobs (issue 21): the timeline job, its families, a near miss.
@Suite struct WhyShippedJobsTests {
    /// Regression: `why` said the shipped timeline job and the README's family were "not a job
    /// refreshd knows". It resolves the timeline job, its families and, for a near miss, says
    /// what was meant.
    @Test func whyKnowsTheShippedTimelineJob() throws {
        let jobs = try JobDirectory.load(NewUserConfigTests.project + "/Jobs", now: TestSupport.now).get().map(\.spec)
        let none = ActivityMachine(settings: ActivitySettings()).snapshot()
        #expect(WhySubject.resolve("design.example.wallpaper.widget", jobs: jobs, activities: none)
            == .timeline(kind: "wallpaper", families: ["systemSmall", "systemMedium"]))
        #expect(WhySubject.resolve("design.example.wallpaper.widget#systemSmall", jobs: jobs, activities: none)
            == .provider(job: "design.example.wallpaper.widget", kind: "wallpaper", family: "systemSmall"))
        #expect(WhySubject.resolve("design.example.wallpaper#systemSmall", jobs: jobs, activities: none) == .unknown)
        #expect(WhySubject.suggestions(for: "design.example.wallpaper#systemSmall", jobs: jobs, activities: none)
            == ["design.example.wallpaper.widget#systemSmall"])
        #expect(WhySubject.suggestions(for: "design.example.heartbet", jobs: jobs, activities: none)
            == ["design.example.heartbeat"])

        var facts = WhyFacts(identifier: "design.example.wallpaper.widget", now: TestSupport.now, live: true,
                             knownUndeclared: true)
        facts.addSubject(jobs: jobs, timelines: TimelineMachine().snapshot(at: TestSupport.now), activities: none) { _ in [] }
        let report = WhyExplainer.explain(facts)
        #expect(report.subject == .timeline && report.reasons == [.timelineJob])
        #expect(!report.paragraph.contains("not a job"))
        #expect(report.paragraph.hasPrefix("design.example.wallpaper.widget is a timeline job: it provides the timelines "
            + "of widget wallpaper (systemSmall, systemMedium)"), "\(report.paragraph)")
    }
}
