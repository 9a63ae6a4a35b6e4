import Testing
import RefreshdCore
@testable import RefreshdRuntime
import RefreshdDaemon

/// `why` for what is not a plain job: timeline jobs, activities (live and dismissed), unknown
/// identifiers and jobs no file declares any more, on plain facts and real machine snapshots.
@Suite struct WhySubjectTests {
    let now = Instant(milliseconds: 1_800_000_000_000)

    func timelineJob(_ id: String, families: [String]) -> JobSpec {
        JobSpec(definition: TaskDefinition(identifier: id, kind: .processing),
                command: CommandJob(argv: ["/bin/true"], environment: [:], workingDirectory: "/"),
                firstRequest: .core, widget: WidgetSpec(kind: "wall", families: families))
    }

    func plainJob(_ id: String) -> JobSpec {
        JobSpec(definition: TaskDefinition(identifier: id),
                command: CommandJob(argv: ["/bin/true"], environment: [:], workingDirectory: "/"), firstRequest: .core)
    }

    /// Activities started by `app.dl` at `now - 1h`: `kept` still active, `gone` ended and dismissed.
    func activities() -> ActivitySnapshot {
        var machine = ActivityMachine()
        var effects: [ActivityEffect] = []
        let start = now - .seconds(3600)
        machine.handle(.restore([]), at: start, into: &effects)
        for id in ["kept", "gone"] {
            machine.handle(.request(ActivityRequest(id: id, typeName: "Pack", owner: "app.dl", namespace: "app",
                                                    content: #"{"progress":0.25}"#)), at: start, into: &effects)
        }
        machine.handle(.end(id: "gone", content: #"{"progress":1}"#, policy: .immediate, timestamp: start + .seconds(60)),
                       at: start + .seconds(60), into: &effects)
        machine.handle(.timerFired, at: now, into: &effects)
        return machine.snapshot()
    }

    func facts(_ id: String, jobs: [JobSpec], live: Bool = true, runs: [RunRecord] = []) -> WhyFacts {
        var f = WhyFacts(identifier: id, now: now, live: live, knownUndeclared: true)
        f.addSubject(jobs: jobs, timelines: TimelineMachine().snapshot(at: now), activities: activities()) { id in runs.filter { $0.identifier == id } }
        return f
    }

    @Test func aTimelineJobNamesEachFamilyEvenWithNothingSaved() {
        let r = WhyExplainer.explain(facts("app.wall", jobs: [timelineJob("app.wall", families: ["systemSmall", "systemLarge"])]))
        #expect(r.subject == .timeline && r.reasons == [.timelineJob])
        #expect(r.paragraph.contains("(app.wall#systemSmall, app.wall#systemLarge) runs when that family's widget reloads"))
        #expect(r.paragraph.contains("systemLarge: nothing is saved for it yet"))
        #expect(r.paragraph.hasSuffix("No provider has run yet."))
    }

    @Test func aFamilyTheJobDoesNotShowIsUnknownWithItsFamiliesSuggested() {
        let jobs = [timelineJob("app.wall", families: ["systemSmall", "systemMedium"])]
        let f = facts("app.wall#systemLarge", jobs: jobs)
        #expect(f.subject == .unknown)
        #expect(f.suggestions == ["app.wall#systemSmall", "app.wall#systemMedium"])
        #expect(WhyExplainer.explain(f).paragraph.hasSuffix("Did you mean app.wall#systemSmall, or app.wall#systemMedium?"))
    }

    @Test func anActivityByItsIdAndTheOnesAJobOwns() {
        let jobs = [plainJob("app.dl")]
        let kept = WhyExplainer.explain(facts("kept", jobs: jobs))
        #expect(kept.subject == .activity && kept.reasons == [.activity])
        #expect(kept.paragraph.hasPrefix("kept is a live activity of type Pack, started by job app.dl"))
        #expect(kept.paragraph.contains("it is active since") && kept.paragraph.contains("progress 25%"))
        #expect(kept.paragraph.contains("leaves the screen by") && !kept.paragraph.contains("dismissed at"))

        let gone = WhyExplainer.explain(facts("gone", jobs: jobs, live: false))
        #expect(gone.subject == .activity)
        #expect(gone.paragraph.hasPrefix("gone was a live activity (from the state files: refreshd is not running) of type Pack"))
        #expect(gone.paragraph.contains("it is no longer shown") && gone.paragraph.contains("final progress was 100%"))

        let owner = WhyExplainer.explain(facts("app.dl", jobs: jobs))
        #expect(owner.subject == .job && owner.reasons.contains(.activity))
        #expect(owner.paragraph.contains("Its live activity: kept (Pack, active since"))
    }

    @Test func aJobNoFileDeclaresButWithHistoryIsExplainedNotRefused() {
        let record = RunRecord(runID: 7, identifier: "app.old", kind: .appRefresh, submitted: now - .seconds(120),
                               earliest: now - .seconds(120), started: now - .seconds(100), deadline: now - .seconds(70),
                               attempt: 1, ended: now - .seconds(90), outcome: .success)
        var f = WhyFacts(identifier: "app.old", now: now, live: false, recentRuns: [StatusReport.Run(record)])
        f.addSubject(jobs: [], timelines: TimelineMachine().snapshot(at: now), activities: activities()) { id in [record].filter { $0.identifier == id } }
        let r = WhyExplainer.explain(f)
        #expect(r.subject == .job && r.reasons.first == .notDeclared)
        #expect(r.paragraph.contains("Last runs: run 7 success"))
        let unknown = WhyExplainer.explain(facts("app.never", jobs: []))
        #expect(unknown.subject == .unknown && unknown.reasons == [.notDeclared])
    }

    @Test func editDistanceIsBounded() {
        #expect(EditDistance.between("heartbeat", "heartbet", limit: 2) == 1)
        #expect(EditDistance.between("abc", "xyz", limit: 2) == 3)
        #expect(EditDistance.between("", "ab", limit: 2) == 2)
    }
}
