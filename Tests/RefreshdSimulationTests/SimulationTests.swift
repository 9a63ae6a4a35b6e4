import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Whole simulations: days of jobs with faults, invariants checked at every step.
@Suite struct SimulationTests {
    /// 2026-11-23T00:00:00Z.
    static let monday = Instant(milliseconds: 1_795_392_000_000)
    /// Every day at 04:00 UTC.
    static let fourAM = Schedule("*-*-* 04:00 UTC") { t in
        let day: Int64 = 86_400_000, offset: Int64 = 4 * 3_600_000
        let next = ((t.milliseconds - offset) / day + 1) * day + offset
        return Instant(milliseconds: next)
    }

    static func nightly(missed: MissedPolicy, model: JobModel = .quickSuccess) -> Scenario.Job {
        Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: "test.nightly", kind: .processing,
                                                              allowance: .seconds(120),
                                                              resubmit: .calendar(fourAM), missed: missed),
                                   command: CommandJob(argv: ["stage"])),
                     model: model)
    }

    static func refresh(model: JobModel = .quickSuccess) -> Scenario.Job {
        Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: "test.refresh", allowance: .seconds(30),
                                                              resubmit: .after(.seconds(6 * 3600)),
                                                              retry: RetryPolicy(initial: .seconds(60), maximum: .seconds(3600), limit: 3)),
                                   command: CommandJob(argv: ["refresh"]), firstRequest: .after(.seconds(2))),
                     model: model)
    }

    @Test(arguments: [MissedPolicy.once, .skip, .all])
    func downOvernightAcrossTheFourAMSlot(_ missed: MissedPolicy) {
        let scenario = Scenario(name: "down overnight (\(missed.rawValue))", jobs: [Self.nightly(missed: missed)],
                                device: DeviceModel(discretion: .exact),
                                faults: [.down(TimeSpan(start: .afterStart(.seconds(86_400 + 2 * 3600)), duration: .seconds(4 * 3600)))],
                                start: Self.monday, days: 3, seed: 7)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let job = report.jobs[0].figures
        #expect(report.total.missed == 1)
        switch missed {
        case .once, .all: #expect(job.success == 3)   // 04:00 day 1, catch-up at 06:00 day 2, 04:00 day 3
        case .skip: #expect(job.success == 2)
        }
        let day2 = report.days[1].jobs["test.nightly"]
        #expect(day2?.missed == 1)
    }

    @Test func killDashNineMidRunIsInterruptedThenRetriedNeverTwice() {
        var job = Self.nightly(missed: .once, model: JobModel(duration: .fixed(.seconds(60))))
        job.spec.definition.retry = RetryPolicy(initial: .seconds(30), maximum: .seconds(300), limit: 3)
        let scenario = Scenario(name: "kill mid-run", jobs: [job], device: DeviceModel(discretion: .exact),
                                faults: [.kill(at: .afterStart(.seconds(4 * 3600 + 20)), restartAfter: .seconds(10))],
                                start: Self.monday, days: 2, seed: 3)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let runs = report.jobs[0].runs
        #expect(runs.map(\.outcome) == [.interrupted, .success, .success])
        // Restarted at 04:00:30, the interrupted attempt runs again at once: an interruption is
        // not the job's fault, so no backoff (issue 36).
        #expect(runs[1].started == Self.monday + .seconds(4 * 3600 + 30))
    }

    /// Regression (a false alarm of the kill invariant): `missed: skip` moves a calendar request
    /// past the slot it slept through at the restart; that is the policy, not a lost commit.
    @Test(arguments: [MissedPolicy.skip, .all])
    func aKillAcrossASlotMayMoveTheRequestByItsPolicy(_ missed: MissedPolicy) {
        let scenario = Scenario(name: "kill across a slot", jobs: [Self.nightly(missed: missed)],
                                device: DeviceModel(discretion: .exact),
                                faults: [.kill(at: .afterStart(.seconds(3 * 3600)), restartAfter: .seconds(2 * 3600))],
                                start: Self.monday, days: 2, seed: 3)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.total.missed == 1)
    }

    @Test func aJobWhoseInputGrowsExpiresOnceItOutgrowsItsAllowance() {
        let job = Self.nightly(missed: .once, model: JobModel(duration: .fixed(.seconds(60)), growth: .seconds(30)))
        let scenario = Scenario(name: "growing input", jobs: [job], start: Self.monday, days: 5, seed: 1)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        // 60 s, 90 s, 120 s (done exactly at the allowance: in time); 150 s and more: expired.
        #expect(report.jobs[0].runs.map(\.outcome) == [.success, .success, .success, .expired, .expired])
    }

    @Test func diskFullDuringALaunchStopsThenRecovers() {
        let scenario = Scenario(name: "disk full", jobs: [Self.nightly(missed: .once)], device: DeviceModel(discretion: .exact),
                                faults: [.storeFull(TimeSpan(start: .afterStart(.seconds(4 * 3600 - 60)), duration: .seconds(600)))],
                                start: Self.monday, days: 2, seed: 5)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let runs = report.jobs[0].runs
        // The 04:00 launch could not be committed: nothing ran then; after the disk has room
        // again refreshd restarts and the missed slot runs once.
        #expect(runs.count == 2)
        #expect(runs[0].started >= Self.monday + .seconds(4 * 3600 + 540))
        #expect(runs.allSatisfy { $0.outcome == .success })
    }

    @Test func aClockStepBackOverASlotDoesNotRunItTwice() {
        let scenario = Scenario(name: "clock back", jobs: [Self.nightly(missed: .all)], device: DeviceModel(discretion: .exact),
                                faults: [.clockStep(at: .afterStart(.seconds(4 * 3600 + 600)), by: .seconds(-3600))],
                                start: Self.monday, days: 2, seed: 9)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.jobs[0].figures.success == 2)
    }

    @Test func theSameSeedGivesTheSameReportByteForByte() throws {
        let jobs = [Self.nightly(missed: .once, model: JobModel(duration: .skewed(median: .seconds(20), p99: .seconds(300)),
                                                               outcomes: .init(success: 0.8, failure: 0.15, crash: 0.05))),
                    Self.refresh(model: JobModel(duration: .uniform(.seconds(1), .seconds(40)),
                                                 outcomes: .init(success: 0.7, failure: 0.3)))]
        func run(_ seed: UInt64) throws -> Data {
            let s = Scenario(name: "determinism", jobs: jobs,
                             faults: [.kill(at: .afterStart(.seconds(30_000)), restartAfter: .seconds(900)),
                                      .suspend(TimeSpan(start: .afterStart(.seconds(100_000)), duration: .seconds(7200)))],
                             start: Self.monday, days: 7, seed: seed)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(Simulation(scenario: s).run())
        }
        #expect(try run(11) == run(11))
        #expect(try run(12) == run(12))
        #expect(try run(11) != run(12))
    }

    @Test func theDiscretionDelaysAppRefreshLaunches() {
        let scenario = Scenario(name: "discretion", jobs: [Self.refresh()],
                                device: DeviceModel(discretion: .delayed(maximum: .seconds(900))),
                                start: Self.monday, days: 2, seed: 4)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let late = report.jobs[0].runs.map { $0.started.milliseconds - $0.earliest.milliseconds }
        #expect(late.count >= 8)
        #expect(late.allSatisfy { $0 >= 0 && $0 < 900_000 })
        #expect(late.contains { $0 > 1000 })
    }

    @Test func thePictureShowsLanesRunsFaultsAndMissedSlots() {
        let scenario = Scenario(name: "picture", jobs: [Self.nightly(missed: .once), Self.refresh()],
                                faults: [.down(TimeSpan(start: .afterStart(.seconds(86_400 + 3 * 3600)), duration: .seconds(3 * 3600)))],
                                start: Self.monday, days: 3, seed: 2)
        let svg = SimulationPicture.svg(Simulation(scenario: scenario).run())
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("test.nightly") && svg.contains("test.refresh"))
        #expect(svg.contains("missed slot"))
        #expect(svg.contains("refreshd not running"))
        #expect(svg.filter { $0 == "<" }.count == svg.filter { $0 == ">" }.count)
    }

    /// A long identifier widens the label column: the plot (its first run) starts after it.
    @Test func aLongIdentifierDoesNotRunIntoThePlot() throws {
        var job = Self.refresh()
        let long = "com.example.a-rather-long-application.background-refresh#systemExtraLarge"
        job.spec.definition = TaskDefinition(identifier: long, allowance: .seconds(30))
        let svg = SimulationPicture.svg(Simulation(scenario: Scenario(name: "long", jobs: [job], start: Self.monday,
                                                                      days: 1, seed: 1)).run())
        let rect = try #require(svg.split(separator: "\n").first { $0.contains("<title>\(long) run") })
        let x = try #require(rect.split(separator: "\"").dropFirst().first.flatMap { Double($0) })
        #expect(x >= 24 + 7.5 * Double(long.count), "the plot starts at \(x)")
    }
}
