import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig

/// Scenario files read into `ScenarioConfig`, with every error located.
@Suite struct ScenarioFileTests {
    /// The default start the tests pass: Monday 2026-11-23T00:00:00Z.
    static let defaultStart = TestSupport.instant("2026-11-23T00:00:00Z")

    /// One inline job, enough for a scenario.
    static let jobs = """
        jobs:
          - identifier: test.nightly
            kind: processing
            command: ["/bin/true"]
            resubmit: {calendar: "*-*-* 04:00", timezone: UTC}
            missed: once
            simulate: {duration: 30s}

        """

    static func parse(_ yaml: String, file: String = "Tests/Scenarios/test.yaml", timeZone: String = "UTC") -> Result<ScenarioConfig, ConfigErrors> {
        ScenarioFile.parse(yaml: yaml, file: file, defaultStart: defaultStart, timeZone: timeZone,
                           searchPath: TestSupport.searchPath)
    }

    func parsed(_ yaml: String, file: String = "Tests/Scenarios/test.yaml", timeZone: String = "UTC",
                  sourceLocation: SourceLocation = #_sourceLocation) -> ScenarioConfig? {
        switch Self.parse(yaml, file: file, timeZone: timeZone) {
        case .success(let scenario): return scenario
        case .failure(let errors):
            Issue.record("expected a scenario, got errors:\n\(errors)", sourceLocation: sourceLocation)
            return nil
        }
    }

    func allErrors(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> [ConfigError] {
        switch Self.parse(yaml) {
        case .success(let scenario):
            Issue.record("expected errors, parsed \(scenario.name)", sourceLocation: sourceLocation)
            return []
        case .failure(let errors):
            for error in errors.errors {
                #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
            }
            return errors.errors
        }
    }

    /// The single error of a scenario that must fail with exactly one, in the scenario file.
    func onlyError(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigError? {
        let all = allErrors(yaml, sourceLocation: sourceLocation)
        #expect(all.count == 1, "expected one error, got \(all)", sourceLocation: sourceLocation)
        if let first = all.first { #expect(first.file == "Tests/Scenarios/test.yaml", sourceLocation: sourceLocation) }
        return all.first
    }

    // MARK: Good files

    @Test func everyFieldIsRead() throws {
        let scenario = try #require(parsed("""
            name: overnight downtime, missed once
            \(Self.jobs)
            start: 2026-11-23T00:00:00+01:00
            days: 3
            seed: 42
            timezone: Europe/Paris
            max-concurrent: 2
            device:
              charging: {from: "22:00", to: "7:00"}
              network-down: [{at: +1d2h, for: 3h}]
              discretion: exact
              timezone: Asia/Tokyo
            faults:
              - down: {at: +1d3h, for: 2h}
              - kill: {at: +1d4h, restart-after: 30s}
              - expire-run: {job: test.nightly, run: 2}
              - crash-run: {job: test.nightly, run: 3}
              - clock-step: {at: +2d, by: -1h}
              - suspend: {at: +12h, for: 8h}
              - store-full: {at: +6h, for: 10m}
              - power-loss: {at: 2026-11-23T01:00:00+01:00, for: 2h}
              - network-loss: {at: +1h, for: 2h}
              - clock-step: {at: +2d1h, by: +30m}
              - suspend: {at: +13h, for: 1h, seen: at-wake-up}
            expect:
              - runs: {job: test.nightly, outcome: success, equal: 3}
              - runs: {job: test.nightly, at-most: 5}
              - runs: {job: test.nightly, outcome: expired, at-least: 1}
              - max-missed: {job: test.nightly, count: 0}
              - max-missed: {count: 2}
              - max-lateness: {job: test.nightly, limit: 5m}
              - no-violation
            """))
        let start = TestSupport.instant("2026-11-22T23:00:00Z")
        #expect(scenario.name == "overnight downtime, missed once")
        #expect(scenario.start == start)
        #expect(scenario.days == 3)
        #expect(scenario.seed == 42)
        #expect(scenario.timeZone == "Europe/Paris")
        #expect(scenario.maxConcurrentRuns == 2)
        #expect(scenario.device == DeviceModel(
            charging: .init(start: 22 * 60, end: 7 * 60),
            networkDown: [TimeSpan(start: .afterStart(.seconds(26 * 3600)), duration: .seconds(3 * 3600))],
            discretion: .exact, timeZone: "Asia/Tokyo"))
        let hour = Duration.seconds(3600)
        #expect(scenario.faults == [
            .down(TimeSpan(start: .afterStart(hour * 27), duration: hour * 2)),
            .kill(at: .afterStart(hour * 28), restartAfter: .seconds(30)),
            .expireRun(job: "test.nightly", run: 2),
            .crashRun(job: "test.nightly", run: 3),
            .clockStep(at: .afterStart(hour * 48), by: .zero - hour),
            .suspend(TimeSpan(start: .afterStart(hour * 12), duration: hour * 8)),
            .storeFull(TimeSpan(start: .afterStart(hour * 6), duration: .seconds(600))),
            .powerLoss(TimeSpan(start: .at(TestSupport.instant("2026-11-23T00:00:00Z")), duration: hour * 2)),
            .networkLoss(TimeSpan(start: .afterStart(hour), duration: hour * 2)),
            .clockStep(at: .afterStart(hour * 49), by: .seconds(1800)),
            .suspend(TimeSpan(start: .afterStart(hour * 13), duration: hour), seenAtWakeUp: true),
        ])
        #expect(scenario.expectations == [
            .runs(job: "test.nightly", outcome: .success, .equal, 3),
            .runs(job: "test.nightly", outcome: nil, .atMost, 5),
            .runs(job: "test.nightly", outcome: .expired, .atLeast, 1),
            .maxMissed(job: "test.nightly", 0),
            .maxMissed(job: nil, 2),
            .maxLateness(job: "test.nightly", .seconds(300)),
            .noViolation,
        ])
        let job = try #require(scenario.jobs.first)
        #expect(scenario.jobs.count == 1)
        #expect(job.spec.identifier == "test.nightly")
        #expect(job.spec.definition.kind == .processing)
        #expect(job.spec.command.argv == ["/bin/true"])
        #expect(job.spec.command.workingDirectory == PathText.projectRoot(of: "Tests/Scenarios/test.yaml"))
        #expect(job.simulate == JobModel(duration: .fixed(.seconds(30))))
        guard case .calendar(let schedule) = job.spec.definition.resubmit else {
            Issue.record("expected a calendar resubmit")
            return
        }
        #expect(schedule.next(after: start) == TestSupport.instant("2026-11-23T04:00:00Z"))
    }

    @Test func defaults() throws {
        let scenario = try #require(parsed(Self.jobs, file: "Tests/Scenarios/quiet-week.yaml"))
        #expect(scenario.name == "quiet-week")
        #expect(scenario.start == Self.defaultStart)
        #expect(scenario.days == 7)
        #expect(scenario.seed == 1)
        #expect(scenario.timeZone == "UTC")
        #expect(scenario.maxConcurrentRuns == 4)
        #expect(scenario.device == DeviceModel())
        #expect(scenario.faults.isEmpty)
        #expect(scenario.expectations.isEmpty)
        // A job without simulate: is a quick success.
        let plain = try #require(parsed("jobs: [{identifier: a.b, command: [true]}]"))
        #expect(plain.jobs.first?.simulate == nil)
        #expect(plain.jobs.first?.spec.firstRequest == .core)
        // The caller's default zone, as written.
        #expect(parsed(Self.jobs, timeZone: "Europe/Paris")?.timeZone == "Europe/Paris")
        // Device defaults per key.
        let device = try #require(parsed(Self.jobs + "device: {charging: always, discretion: {delayed: 5m}}")?.device)
        #expect(device == DeviceModel(charging: nil, discretion: .delayed(maximum: .seconds(300))))
        #expect(parsed(Self.jobs + "device: {charging: never}")?.device.charging == .init(start: 0, end: 0))
        #expect(parsed(Self.jobs + "faults: []\nexpect:\n")?.faults == [])
        #expect(parsed(Self.jobs + "faults: [{kill: {at: +1h}}]")?.faults == [.kill(at: .afterStart(.seconds(3600)), restartAfter: .zero)])
        // Issue 33: an operator's pause, resumed after `for`, or never.
        #expect(parsed(Self.jobs + "faults: [{pause: {job: test.nightly, at: +1h, for: 2h}}, {pause: {job: test.nightly, at: +5h}}]")?.faults
                == [.pause(job: "test.nightly", at: .afterStart(.seconds(3600)), for: .seconds(7200)),
                    .pause(job: "test.nightly", at: .afterStart(.seconds(18000)), for: nil)])
        // Issue 34: the operator's other orders, as a replay gives them back.
        #expect(parsed(Self.jobs + "faults: [{operator: {at: +1h, submit: test.nightly}}, {operator: {at: +2h, cancel-all: true}},"
                       + " {operator: {at: +3h, reload: all}}, {operator: {at: +4h, simulate-expiration: test.nightly}}]")?.faults
                == [.order(.submit("test.nightly", earliest: nil), at: .afterStart(.seconds(3600))),
                    .order(.cancelAll(namespace: nil), at: .afterStart(.seconds(7200))),
                    .order(.reloadWidgets(kind: nil, reason: .explicitAPI), at: .afterStart(.seconds(10800))),
                    .order(.expireNow("test.nightly"), at: .afterStart(.seconds(14400)))])
        #expect(parsed(Self.jobs + "expect: [{no-violation: }]")?.expectations == [.noViolation])
    }

    @Test func defaultStartIsTheNextMidnightUTC() {
        #expect(ScenarioFile.defaultStart(now: TestSupport.instant("2026-11-21T12:00:00Z")) == TestSupport.instant("2026-11-22T00:00:00Z"))
        #expect(ScenarioFile.defaultStart(now: TestSupport.instant("2026-11-22T00:00:00Z")) == TestSupport.instant("2026-11-22T00:00:00Z"))
        #expect(ScenarioFile.defaultStart(now: TestSupport.instant("2026-11-22T00:00:00.001Z")) == TestSupport.instant("2026-11-23T00:00:00Z"))
    }

    @Test func inlineJobsUseTheScenarioZoneAndStart() throws {
        let scenario = try #require(parsed("""
            timezone: Asia/Tokyo
            start: 2026-11-23T00:00:00Z
            jobs:
              - identifier: a.daily
                command: [true]
                resubmit: {calendar: "*-*-* 06:00"}
              - identifier: b.other
                kind: processing
                command: /bin/sh
                earliest: +1h
            """))
        #expect(scenario.jobs.map(\.spec.identifier) == ["a.daily", "b.other"])
        guard case .calendar(let schedule) = scenario.jobs[0].spec.definition.resubmit else {
            Issue.record("expected a calendar")
            return
        }
        #expect(schedule.text == "*-*-* 06:00 [Asia/Tokyo]")
        #expect(scenario.jobs[1].spec.firstRequest == .after(.seconds(3600)))
    }

    // MARK: Jobs folders

    @Test func jobsFolderRelativeToTheScenario() throws {
        try TestSupport.withTemporaryDirectory { root in
            TestSupport.write("identifier: com.example.one\ncommand: [true]\nsimulate: {duration: 3s}\n", to: "Jobs/one.yaml", in: root)
            TestSupport.write("identifier: com.example.two\nkind: processing\ncommand: [true]\n", to: "Jobs/two.yaml", in: root)
            let path = TestSupport.write("jobs: ../../Jobs\nexpect:\n  - runs: {job: com.example.two, at-least: 1}\n",
                                         to: "Tests/Scenarios/folder.yaml", in: root)
            let scenario = try ScenarioFile.load(path: path, defaultStart: Self.defaultStart,
                                                 searchPath: TestSupport.searchPath).get()
            #expect(scenario.name == "folder")
            #expect(scenario.jobs.map(\.spec.identifier) == ["com.example.one", "com.example.two"])
            #expect(scenario.jobs[0].simulate == JobModel(duration: .fixed(.seconds(3))))
            #expect(scenario.jobs[0].spec.command.workingDirectory == (root as NSString).standardizingPath)
        }
    }

    @Test func jobsFolderErrorsComeFromItsFiles() {
        TestSupport.withTemporaryDirectory { root in
            TestSupport.write("identifier: com.example.one\ncommand: [true]\nallowence: 5m\n", to: "Jobs/one.yaml", in: root)
            let path = TestSupport.write("jobs: ../Jobs\nfaults: [{crash-run: {job: not.there, run: 1}}]\n",
                                         to: "Scenarios/bad.yaml", in: root)
            guard case .failure(let errors) = ScenarioFile.load(path: path, defaultStart: Self.defaultStart,
                                                                searchPath: TestSupport.searchPath) else {
                Issue.record("expected errors")
                return
            }
            // The folder did not load, so job names are not checked against it.
            #expect(errors.errors.count == 1)
            #expect(errors.errors.first?.file == root + "/Jobs/one.yaml")
            #expect(errors.errors.first?.position == "3:1")
            #expect(errors.errors.first?.message == "unknown key \"allowence\" (did you mean \"allowance\"?)")
        }
    }

    @Test func jobsFolderProblemsAreLocatedInTheScenario() throws {
        try TestSupport.withTemporaryDirectory { root in
            TestSupport.write("x", to: "file", in: root)
            try FileManager.default.createDirectory(atPath: root + "/Empty", withIntermediateDirectories: true)
            let cases: [(String, String)] = [
                ("Missing", "jobs: expected a jobs folder, found \"Missing\" (\(root)/Missing), which does not exist (a relative folder is relative to the scenario file)"),
                ("file", "jobs: expected a jobs folder, found \"file\" (\(root)/file), which is a file"),
                ("Empty", "jobs: expected a folder with at least one job file (*.yaml), found none in \"Empty\" (\(root)/Empty)"),
            ]
            for (folder, message) in cases {
                let path = TestSupport.write("days: 1\njobs: \(folder)\n", to: "s.yaml", in: root)
                guard case .failure(let errors) = ScenarioFile.load(path: path, defaultStart: Self.defaultStart) else {
                    Issue.record("expected errors for \(folder)")
                    continue
                }
                #expect(errors.errors.map(\.position) == ["2:7"])
                #expect(errors.errors.map(\.message) == [message])
                #expect(errors.errors.map(\.file) == [path])
            }
        }
    }

    @Test func shippedJobsInAScenario() throws {
        try TestSupport.withTemporaryDirectory { root in
            let path = TestSupport.write("jobs: \(SimulateBlockTests.projectRoot)/Jobs\ndays: 2\nexpect: [no-violation]\n",
                                         to: "shipped.yaml", in: root)
            let scenario = try ScenarioFile.load(path: path, defaultStart: Self.defaultStart,
                                                 searchPath: TestSupport.searchPath).get()
            #expect(scenario.jobs.count >= 5)
            #expect(scenario.jobs.contains { $0.spec.identifier == "design.example.wallpaper.refresh" && $0.spec.action != nil })
        }
    }

    @Test func pathsAreNormalizedByText() {
        #expect(PathText.lexicallyNormalized("Tests/Scenarios/../../Jobs") == "Jobs")
        #expect(PathText.lexicallyNormalized("./../Jobs") == "../Jobs")
        #expect(PathText.lexicallyNormalized("/a/../../b/./c/") == "/b/c")
        #expect(PathText.lexicallyNormalized("a/..") == ".")
    }

    // MARK: Errors in the scenario's own settings

    @Test func unknownAndMissingKeys() throws {
        var e = try #require(onlyError(Self.jobs + "dayz: 3"))
        #expect(e.position == "8:1")
        #expect(e.message == "unknown key \"dayz\" (did you mean \"days\"?)")
        e = try #require(onlyError("days: 3"))
        #expect(e.position == "1:1")
        #expect(e.message.hasPrefix("missing required key \"jobs\" (expected a jobs folder like jobs: ../../Jobs, or a list of jobs"))
        e = try #require(onlyError("jobz: [{identifier: a.b, command: [true]}]"))
        #expect(e.message == "unknown key \"jobz\" (did you mean \"jobs\"?)")
        e = try #require(onlyError(Self.jobs + "device: {charing: always}"))
        #expect(e.position == "8:10")
        #expect(e.message == "unknown key \"charing\" in device (did you mean \"charging\"?)")
    }

    @Test func scalarSettingErrors() throws {
        let cases: [(String, String, String)] = [
            ("days: 0", "8:7", "days: expected a whole number from 1 to 366, found \"0\""),
            ("days: 367", "8:7", "days: expected a whole number from 1 to 366, found \"367\""),
            ("seed: -1", "8:7", "seed: expected a whole number from 0 to 18446744073709551615, found \"-1\""),
            ("max-concurrent: 0", "8:17", "max-concurrent: expected a whole number from 1 to 1000, found \"0\""),
            ("timezone: Mars/Base", "8:11", "timezone: expected an IANA time zone like Europe/Paris, found \"Mars/Base\""),
            ("start: tomorrow", "8:8", "start: expected an ISO 8601 date with offset like 2026-11-23T00:00:00Z, found \"tomorrow\" (the date must be YYYY-MM-DD)"),
            ("start: 2026-11-23T00:00:00", "8:8", "start: expected an ISO 8601 date with offset like 2026-11-23T00:00:00Z, found \"2026-11-23T00:00:00\" (the offset is missing: add Z for UTC or ±HH:MM)"),
            ("name: \"two\\nlines\"", "8:7", "name: expected one line of text, found \"two\\nlines\", which has a line break"),
            ("name: [a]", "8:7", "name: expected one line of text, found a list"),
        ]
        for (line, position, message) in cases {
            let e = try #require(onlyError(Self.jobs + line))
            #expect(e.position == position, "\(line)")
            #expect(e.message == message)
        }
        let e = try #require(onlyError("jobs: {identifier: a.b}"))
        #expect(e.message == "jobs: expected a jobs folder like ../../Jobs (relative to the scenario file) or a list of jobs, found a mapping (write each job as a list item, after -)")
        #expect(onlyError("jobs: []")?.message == "jobs: expected at least one job, found an empty list")
        #expect(onlyError("jobs:")?.message == "jobs: expected a jobs folder like ../../Jobs (relative to the scenario file) or a list of jobs, found nothing (null)")
    }

    @Test func deviceErrors() throws {
        let cases: [(String, String, String)] = [
            ("device: {charging: sometimes}", "8:20", "device.charging: expected always, never or a daily window like {from: \"22:00\", to: \"07:00\"}, found \"sometimes\""),
            ("device: {charging: {from: \"25:00\", to: \"07:00\"}}", "8:27", "device.charging.from: expected a time of day like \"22:00\" (HH:MM, 00:00 to 23:59), found \"25:00\""),
            ("device: {charging: {from: \"22:00\", to: \"22:00\"}}", "8:40", "device.charging.to: expected a time other than from: (an empty window); write always or never for a machine always or never on mains"),
            ("device: {charging: {from: \"22:00\"}}", "8:20", "device.charging: missing required key \"to\" (expected {from: \"22:00\", to: \"07:00\"})"),
            ("device: {discretion: lazy}", "8:22", "device.discretion: expected exact or {delayed: 15m}, found \"lazy\""),
            ("device: {discretion: {delayed: 0s}}", "8:32", "device.discretion.delayed: expected a duration greater than zero, found \"0s\""),
            ("device: {network-down: {at: +1h, for: 1h}}", "8:24", "device.network-down: expected a list like [{at: +1d2h, for: 3h}], found a mapping"),
            ("device: {network-down: [{at: +1h}]}", "8:25", "device.network-down: missing required key \"for\" (expected {at: +1d2h, for: 3h})"),
            ("device: {network-down: [{at: soon, for: 1h}]}", "8:30", "device.network-down.at: expected +DURATION after the start (like +1d2h) or an ISO 8601 date with offset (like 2026-11-23T04:00:00Z), found \"soon\""),
            ("device: {timezone: Nowhere}", "8:20", "device.timezone: expected an IANA time zone like Europe/Paris, found \"Nowhere\""),
            ("device: on", "8:9", "device: expected a mapping like {charging: {from: \"22:00\", to: \"07:00\"}, discretion: exact}, found \"on\""),
        ]
        for (line, position, message) in cases {
            let e = try #require(onlyError(Self.jobs + line))
            #expect(e.position == position, "\(line)")
            #expect(e.message == message)
        }
    }

    @Test func faultErrors() throws {
        let cases: [(String, String, String)] = [
            ("faults: [{kil: {at: +1h}}]", "8:11", "unknown key \"kil\" in faults (did you mean \"kill\"?)"),
            ("faults: [reboot]", "8:10", "unknown key \"reboot\" in faults; expected one of down, kill, expire-run, crash-run, clock-step, suspend, store-full, power-loss, network-loss, provider-garbage, provider-expires, budget-empty, activity-silent, widget-intents, low-power, notifier-down, pause, operator"),
            ("faults: [{down: {at: +1h, for: 1h}, kill: {at: +2h}}]", "8:37", "faults: expected one kind per item, found down and kill in one item; start each with its own -"),
            ("faults: [kill]", "8:10", "kill: expected a mapping like {at: +1d4h, restart-after: 30s}, found nothing (null)"),
            ("faults: [[kill]]", "8:10", "faults: expected an item like {kill: {at: +1d4h, restart-after: 30s}} (one of down, kill, expire-run, crash-run, clock-step, suspend, store-full, power-loss, network-loss, provider-garbage, provider-expires, budget-empty, activity-silent, widget-intents, low-power, notifier-down, pause, operator), found a list"),
            ("faults: {kill: {at: +1h}}", "8:9", "faults: expected a list of faults like [{kill: {at: +1d4h, restart-after: 30s}}], found a mapping"),
            ("faults: [{kill: {restart-after: 1s}}]", "8:17", "kill: missing required key \"at\" (expected {at: +1d4h, restart-after: 30s})"),
            ("faults: [{kill: {at: +1h, restart-after: soon}}]", "8:42", "kill.restart-after: expected a duration like 30s, 10m or 1h30m, found \"soon\""),
            ("faults: [{down: {at: +1h, for: 0s}}]", "8:32", "down.for: expected a duration greater than zero, found \"0s\""),
            ("faults: [{expire-run: {job: test.nightly, run: 0}}]", "8:48", "expire-run.run: expected a run number 1 or greater (1 is the job's first run), found \"0\""),
            ("faults: [{crash-run: {job: test.nightly}}]", "8:22", "crash-run: missing required key \"run\" (expected {job: com.example.refresh, run: 2})"),
            ("faults: [{clock-step: {at: +1h, by: 0s}}]", "8:37", "clock-step.by: expected a step other than zero, found \"0s\""),
            ("faults: [{clock-step: {at: +1h, by: -x}}]", "8:37", "clock-step.by: expected a duration with an optional sign, like -1h or +30m, found \"-x\""),
            ("faults: [{suspend: {at: +1h, for: 1h, until: +2h}}]", "8:39", "unknown key \"until\" in suspend; expected one of at, for, seen"),
            ("faults: [{suspend: {at: +1h, for: 1h, seen: never}}]", "8:45", "suspend.seen: expected one of at-resume, at-wake-up, found \"never\""),
            ("faults: [{pause: {at: +1h}}]", "8:18", "pause: missing required key \"job\" (expected {job: com.example.refresh, at: +1d, for: 6h})"),
            ("faults: [{pause: {job: test.nightly, at: +1h, for: 0s}}]", "8:52", "pause.for: expected a duration greater than zero, found \"0s\""),
            ("faults: [{operator: {at: +1h}}]", "8:21", "operator: expected one order of submit, cancel, cancel-all, simulate-launch, simulate-expiration, reload beside at (like {at: +1d, submit: com.example.refresh})"),
            ("faults: [{operator: {at: +1h, submit: test.nightly, cancel: test.nightly}}]", "8:21", "operator: expected one order of submit, cancel, cancel-all, simulate-launch, simulate-expiration, reload beside at (like {at: +1d, submit: com.example.refresh}), found submit and cancel"),
        ]
        for (line, position, message) in cases {
            let e = try #require(onlyError(Self.jobs + line))
            #expect(e.position == position, "\(line)")
            #expect(e.message == message)
        }
    }

    @Test func expectationErrors() throws {
        let cases: [(String, String, String)] = [
            ("expect: [{runs: {job: test.nightly}}]", "8:17", "runs: missing a count: expected equal: N, at-most: N or at-least: N (like {job: com.example.refresh, outcome: success, equal: 3})"),
            ("expect: [{runs: {job: test.nightly, equal: 1, at-most: 2}}]", "8:47", "runs: expected one of equal:, at-most: or at-least:, found equal and at-most"),
            ("expect: [{runs: {job: test.nightly, equals: 1}}]", "8:37", "unknown key \"equals\" in runs (did you mean \"equal\"?)"),
            ("expect: [{runs: {job: test.nightly, outcome: ok, equal: 1}}]", "8:46", "runs.outcome: expected one of success, failure, expired, crashed, interrupted, found \"ok\""),
            ("expect: [{runs: {job: test.nightly, equal: -1}}]", "8:44", "runs.equal: expected a whole number 0 or greater, found \"-1\""),
            ("expect: [{runs: {equal: 1}}]", "8:17", "runs: missing required key \"job\" (expected {job: com.example.refresh, outcome: success, equal: 3})"),
            ("expect: [{max-missed: {job: test.nightly}}]", "8:23", "max-missed: missing required key \"count\" (expected {job: com.example.nightly, count: 0})"),
            ("expect: [{max-lateness: {job: test.nightly, limit: late}}]", "8:52", "max-lateness.limit: expected a duration like 30s, 10m or 1h30m, found \"late\""),
            ("expect: [{no-violation: yes}]", "8:25", "no-violation: expected nothing after it (write - no-violation), found \"yes\""),
            ("expect: [no-violations]", "8:10", "unknown key \"no-violations\" in expect (did you mean \"no-violation\"?)"),
            ("expect: no-violation", "8:9", "expect: expected a list like [{runs: {job: com.example.refresh, equal: 3}}, no-violation], found \"no-violation\""),
        ]
        for (line, position, message) in cases {
            let e = try #require(onlyError(Self.jobs + line))
            #expect(e.position == position, "\(line)")
            #expect(e.message == message)
        }
    }

    @Test func unknownJobsAreLocatedAtTheirName() throws {
        var e = try #require(onlyError(Self.jobs + "faults: [{expire-run: {job: test.nightli, run: 2}}]"))
        #expect(e.position == "8:29")
        #expect(e.message == "expire-run.job: no job \"test.nightli\" in this scenario; did you mean \"test.nightly\"?")
        e = try #require(onlyError(Self.jobs + "expect:\n  - max-lateness: {job: com.example.other, limit: 1m}"))
        #expect(e.position == "9:25")
        #expect(e.message == "max-lateness.job: no job \"com.example.other\" in this scenario; expected one of test.nightly")
        e = try #require(onlyError(Self.jobs + "expect: [{max-missed: {job: x.y, count: 0}}]"))
        #expect(e.message == "max-missed.job: no job \"x.y\" in this scenario; expected one of test.nightly")
    }

    /// Issue 23: a fault may name one instance of a template, `T[KEY]`; with an `instances:`
    /// list the key must be one of it (a typo would be a fault that never fires).
    @Test func aFaultMayNameAnInstanceOfItsTemplate() throws {
        let users = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios/template-staging-one-fails.users.txt").path
        let jobs = """
            jobs:
              - identifier: test.feed
                template: true
                parameters: [user]
                instances: \(users)
                kind: processing
                command: ["/bin/true", "{user}"]
                resubmit: {calendar: "*-*-* 04:00", timezone: UTC}

            """
        let scenario = parsed(jobs + "faults: [{crash-run: {job: \"test.feed[bob]\", run: 2}}]")
        #expect(scenario?.faults == [.crashRun(job: "test.feed[bob]", run: 2)])
        let e = try #require(onlyError(jobs + "faults: [{crash-run: {job: \"test.feed[dave]\", run: 2}}]"))
        #expect(e.message.hasPrefix("crash-run.job: no job \"test.feed[dave]\" in this scenario"))
    }

    @Test func instantsMustFallInsideTheSimulation() throws {
        var e = try #require(onlyError(Self.jobs + "days: 2\nfaults: [{kill: {at: +2d}}]"))
        #expect(e.position == "9:22")
        #expect(e.message == "kill.at: \"+2d\" is at or after the end of the simulation (2026-11-25T00:00:00.000Z, 2 days after the start); expected an instant within the simulated days")
        e = try #require(onlyError(Self.jobs + "faults: [{down: {at: 2026-11-22T23:00:00Z, for: 2h}}]"))
        #expect(e.position == "8:22")
        #expect(e.message == "down.at: \"2026-11-22T23:00:00Z\" is before the simulation starts (2026-11-23T00:00:00.000Z); expected an instant within the 7 simulated days")
        // Checked against the start and days given, wherever they are written.
        #expect(parsed("faults: [{kill: {at: +8d}}]\ndays: 9\n" + Self.jobs)?.faults.count == 1)
        #expect(parsed(Self.jobs + "faults: [{kill: {at: 2026-11-20T00:00:00Z}}]\nstart: 2026-11-19T00:00:00Z")?.faults.count == 1)
    }

    // MARK: Inline jobs

    @Test func inlineJobErrorsAreLocatedInTheScenario() {
        let errors = allErrors("""
            jobs:
              - identifier: a.b
                command: [true]
                allowance: soon
              - identifier: a.c
                comand: [true]
              - identifier: not-reverse-dns
                command: [true]
                kind: processing
              - just a string
            faults: [{crash-run: {job: a.c, run: 1}}]
            """)
        // a.b and a.c, both app-refresh in namespace "a", clash: said in the same pass as their own errors.
        #expect(errors.map(\.position) == ["4:16", "5:17", "6:5", "7:17", "10:5"])
        #expect(errors.map(\.file) == Array(repeating: "Tests/Scenarios/test.yaml", count: 5))
        #expect(errors[0].message == "allowance: expected a duration like 30s, 10m or 1h30m, found \"soon\"")
        #expect(errors[1].message.hasPrefix("too many app-refresh jobs in namespace \"a\""))
        #expect(errors[2].message == "unknown key \"comand\" (did you mean \"command\"?)")
        #expect(errors[3].message.hasPrefix("identifier: expected a reverse-DNS name"))
        #expect(errors[4].message == "jobs: expected each job to be a mapping of job settings (identifier:, command:, ...), found \"just a string\"")
    }

    @Test func eachInlineJobHasItsOwnSuggestions() {
        // The misspelt command of the first job does not hide the missing command of the second.
        let errors = allErrors("""
            jobs:
              - identifier: a.b
                comand: [true]
              - identifier: b.c
            """)
        #expect(errors.map(\.position) == ["3:5", "4:5"])
        #expect(errors[1].message.hasPrefix("missing required key \"command\""))
    }

    @Test func inlineJobsAreCheckedTogether() {
        let errors = allErrors("""
            jobs:
              - identifier: a.b
                command: [true]
              - identifier: a.b
                kind: processing
                command: [true]
              - identifier: a.d
                command: [true]
            """)
        #expect(errors.map(\.position) == ["4:17", "7:17"])
        #expect(errors[0].message == "identifier: \"a.b\" is already used by Tests/Scenarios/test.yaml:2; expected identifiers to be unique across the scenario")
        #expect(errors[1].message.hasPrefix("too many app-refresh jobs in namespace \"a\" (the default: the identifier "
            + "without its last label): a.d (Tests/Scenarios/test.yaml, this file) joins a.b (Tests/Scenarios/test.yaml:2)"))
    }

    @Test func inlineCalendarsMustElapseAfterTheStart() throws {
        let e = try #require(onlyError("""
            start: 2027-01-01T00:00:00Z
            jobs:
              - identifier: a.b
                command: [true]
                earliest: "2026-12-25 10:00 UTC"
            """))
        #expect(e.position == "5:15")
        #expect(e.message.contains("never elapses after 2027-01-01T00:00:00.000Z"))
    }

    @Test func simulateBlockErrorsInInlineJobs() throws {
        let e = try #require(onlyError("""
            jobs:
              - identifier: a.b
                command: [true]
                simulate: {outcomes: {success: 0}}
            """))
        #expect(e.position == "4:26")
        #expect(e.message.hasPrefix("simulate.outcomes: expected at least one weight greater than 0"))
    }

    // MARK: Hostile input

    @Test func hostileInputs() throws {
        var e = try #require(onlyError(Self.jobs + "name: \"a\\0b\""))
        #expect(e.position == "8:7")
        #expect(e.message.hasPrefix("found a NUL character (\\0) in \"a\\0b\""))
        e = try #require(onlyError(Self.jobs + "---\nname: x"))
        #expect(e.message == "invalid YAML: found another document; a scenario file holds one scenario (one document)")
        let bomb = AliasBombTests.bombAnchors().replacingOccurrences(of: "identifier: com.example.bomb\ncommand: [true]\n", with: "")
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            e = try #require(onlyError(Self.jobs + bomb.replacingOccurrences(of: "x", with: "name")))
        }
        #expect(elapsed < .seconds(1))
        #expect(e.message.hasSuffix("expected a scenario file of at most 10000 values"))
        e = try #require(onlyError(Self.jobs + "name: " + String(repeating: "[", count: 40) + String(repeating: "]", count: 40)))
        #expect(e.message.hasPrefix("values are nested more than 32 levels deep"))
        let huge = Self.jobs + "name: " + String(repeating: "x", count: JobFileLimits.maximumFileSize)
        e = try #require(onlyError(huge))
        #expect(e.position == "1:1")
        #expect(e.message.hasPrefix("the file is 1,048,"))
        #expect(e.message.hasSuffix("bytes; expected a scenario file of at most 1 MiB (1,048,576 bytes)"))
        e = try #require(onlyError(Self.jobs + "name: \"\\u001B[31mred\\u2028\""))
        #expect(e.message == "name: expected one line of text, found \"\\u{1B}[31mred\\u{2028}\", which has a line break")
        e = try #require(onlyError(Self.jobs + "name: \"a\\u001Bb\""))
        #expect(e.message == "name: expected one line of text, found \"a\\u{1B}b\", which has a control character")
        #expect(onlyError("")?.message == "expected a mapping of scenario settings (jobs:, days:, faults:, expect:, ...), found an empty file")
        #expect(onlyError("- a")?.message == "expected a mapping of scenario settings (jobs:, days:, faults:, expect:, ...), found a list")
    }

    @Test func manyErrorsAreCapped() {
        let yaml = Self.jobs + "faults:\n" + (1...30).map { _ in "  - kill: {at: x}\n" }.joined()
        let errors = allErrors(yaml)
        #expect(errors.count == JobFileLimits.maximumErrorsPerFile + 1)
        #expect(errors.last?.message == "10 more errors in this file not shown (at most 20 are shown per file)")
    }

    @Test func unreadableScenarioFiles() {
        TestSupport.withTemporaryDirectory { root in
            guard case .failure(let missing) = ScenarioFile.load(path: root + "/none.yaml", defaultStart: Self.defaultStart) else {
                Issue.record("expected an error")
                return
            }
            #expect(missing.description == "\(root)/none.yaml:1:1: expected a readable scenario file, but it no longer exists")
            guard case .failure(let folder) = ScenarioFile.load(path: root, defaultStart: Self.defaultStart) else {
                Issue.record("expected an error")
                return
            }
            #expect(folder.errors.first?.message == "expected a scenario file, but this is a directory")
            let bad = TestSupport.write("", to: "bad.yaml", in: root)
            _ = FileManager.default.createFile(atPath: bad, contents: Data([0x6E, 0x3A, 0x20, 0xFF]))
            guard case .failure(let binary) = ScenarioFile.load(path: bad, defaultStart: Self.defaultStart) else {
                Issue.record("expected an error")
                return
            }
            #expect(binary.errors.first?.position == "1:4")
        }
    }

    @Test func invalidDefaultZone() throws {
        switch Self.parse(Self.jobs, timeZone: "Not/AZone") {
        case .success: Issue.record("expected an error")
        case .failure(let errors):
            #expect(errors.errors.map(\.message) == ["the default time zone \"Not/AZone\" is not an IANA time zone; expected timezone: ZONE in the scenario file, like timezone: Europe/Paris"])
        }
        #expect(parsed(Self.jobs + "timezone: UTC", timeZone: "Not/AZone")?.timeZone == "UTC")
    }
}
