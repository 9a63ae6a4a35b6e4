import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// The live activities in a replay (issue 34): the machines record each activity's state
/// changes with its updates so far, a replayed run writes the lines it wrote then, and the
/// comparison puts both sides per activity and UTC day.
@Suite struct ReplayActivityTests {
    let t0 = Instant(milliseconds: 1_764_892_800_000)  // 2025-12-05T00:00:00Z
    func t(_ seconds: Int64) -> Instant { t0 + .seconds(seconds) }

    func step(_ id: String, _ at: Int64, _ to: String?, _ cause: String? = nil, updates: Int) -> ReplayComparison.ActivityStep {
        .init(id: id, at: t(at), to: to, cause: cause, updates: updates)
    }

    /// A day's updates are those its last step counts since the day before; the states reached
    /// and the end per day and over the period; what differs is the activities' error.
    @Test func theActivitiesComparePerUTCDayAndOverThePeriod() throws {
        let ran = [step("pack", 80_000, "active", "requested", updates: 0), step("pack", 90_000, "stale", "stale-date-passed", updates: 4),
                   step("pack", 90_600, "ended", "ended-by-request", updates: 6), step("pack", 90_600, "dismissed", "dismissal-policy", updates: 6)]
        var whatIf = ran
        whatIf[2] = step("pack", 90_600, "ended", "owner-failed", updates: 5)
        whatIf[3] = step("pack", 90_600, "dismissed", "dismissal-policy", updates: 5)
        var comparison = ReplayComparison(from: t(0), to: t(172_800), ran: [], replayed: [], whatIf: [], whatIfJobs: "Other", zone: .gmt)
        comparison.compareActivities(ran: ran, replayed: ran, whatIf: whatIf)
        #expect(comparison.activityDays.map { "\($0.day ?? "-") \($0.ran.updates) \($0.ran.states)" }
            == ["2025-12-05 0 [\"active\"]", "2025-12-06 6 [\"stale\", \"ended\", \"dismissed\"]"])
        let period = try #require(comparison.activities.first)
        #expect(period.ran.updates == 6 && period.ran.end == "ended-by-request" && period.whatIf?.end == "owner-failed")
        #expect(comparison.text.contains("""
            activities:
              pack: 6 updates, active > stale > ended (ended-by-request) > dismissed \
            | 6 updates, active > stale > ended (ended-by-request) > dismissed | 5 updates, active > stale > ended (owner-failed) > dismissed
            """), "\(comparison.text)")
        #expect(comparison.errorLine.hasSuffix("; activities: updates 0 apart, states 0 apart, ends 0 apart; 1 of 1 activities exact"))

        var apart = ReplayComparison(from: t(0), to: t(172_800), ran: [], replayed: [], whatIf: nil, whatIfJobs: nil, zone: .gmt)
        apart.compareActivities(ran: ran, replayed: whatIf, whatIf: nil)
        #expect(apart.error.activityUpdatesApart == 1 && apart.error.activityEndsApart == 1 && apart.error.activityStatesApart == 0)
        #expect(apart.error.exactActivities == 0 && apart.error.activities == 1)
    }

    /// A recorded run's live lines are written at their own timestamps into the run, the
    /// others at its end.
    @Test func recordedLinesAreWrittenAtTheirTimestamps() {
        let lines = [#"{"activity":"start","id":"pack","type":"Pack","content":{"progress":0}}"#,
                     #"{"instances":[]}"#,
                     #"{"activity":"update","id":"pack","content":{"progress":0.5},"timestamp":"\#(t(10).iso8601)"}"#,
                     #"{"activity":"end","id":"pack","content":{"progress":1},"dismissal":"immediate","timestamp":"\#(t(90).iso8601)"}"#]
        let (timed, atEnd) = Replay.lines(lines, start: t(0), duration: .seconds(30))
        #expect(timed.map(\.offset) == [.zero, .seconds(10), .seconds(30)], "the end's timestamp is past the run's end: at its end")
        #expect(timed.map(\.line) == [lines[0], lines[2], lines[3]])
        #expect(atEnd == [lines[1]])
    }

    /// The round trip: a plain job that drove an activity (no `simulate:` activity in its
    /// file) is replayed with the lines it wrote, and the simulation's store records the same
    /// steps the daemon's did.
    @Test func aJobsRecordedActivityIsReplayedAndRecordedAsItRan() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.pack", kind: .processing, allowance: .seconds(60)),
                           command: CommandJob(argv: ["pack"]))
        let base = Scenario(name: "replay", jobs: [.init(spec: spec)], start: t(0))
        var run = RunRecord(runID: 1, identifier: "app.pack", kind: .processing, submitted: t(0), earliest: t(0), started: t(0),
                            deadline: t(60))
        run.ended = t(30)
        run.outcome = .success
        run.exitStatus = 0
        run.output = RunOutput(results: [
            #"{"activity":"start","id":"pack","type":"Pack","content":{"progress":0}}"#,
            #"{"activity":"update","id":"pack","content":{"progress":0.3},"timestamp":"\#(t(10).iso8601)"}"#,
            #"{"activity":"update","id":"pack","content":{"progress":0.6},"timestamp":"\#(t(20).iso8601)"}"#,
            #"{"activity":"end","id":"pack","content":{"progress":1},"dismissal":"immediate","timestamp":"\#(t(30).iso8601)"}"#,
        ])
        let setup = Replay.scenario(base, runs: [run], world: [WorldEvent(at: t(0), what: .started)], from: t(0), to: t(600))
        let simulation = Simulation(scenario: setup.scenario)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let replayed = simulation.activitySteps(to: t(600))
        #expect(replayed.map { "\($0.at.milliseconds - t0.milliseconds) \($0.to ?? "-") \($0.updates)" }
            == ["0 active 0", "30000 ended 2", "30000 dismissed 2"], "\(replayed)")
        // What the daemon's store holds of the same run (the same machines recorded it).
        let ran = [step("pack", 0, "active", "requested", updates: 0), step("pack", 30, "ended", "ended-by-request", updates: 2),
                   step("pack", 30, "dismissed", "dismissal-policy", updates: 2)]
        var comparison = ReplayComparison(from: t(0), to: t(600), ran: [.init(run)], replayed: report.comparedRuns, whatIf: nil,
                                          whatIfJobs: nil, zone: .gmt)
        comparison.compareActivities(ran: ran, replayed: replayed, whatIf: nil)
        #expect(comparison.error.exactActivities == 1, "\(comparison.text)")
    }
}
