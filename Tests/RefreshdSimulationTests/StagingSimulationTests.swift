import Foundation
import Testing
import RefreshdCore
import RefreshdRuntime
import RefreshdConfig
@testable import RefreshdSimulation

/// Staging in simulation: the modelled `stage-playlist` and `provider: playlist` share one
/// container model; a missed or expired staging night shows as the widget's fallback in the
/// report, never as a blank widget; the real actions never run without `--exec`.
@Suite struct StagingSimulationTests {
    static let widget = "wallpaper/systemMedium"

    /// The wallpaper job (staging tomorrow at 04:00) and the playlist widget, with `faults`.
    static func scenario(faults: String = "", todayIfMissing: Bool = true,
                         simulate: String = "{duration: 20s}", allowance: String = "") throws -> Scenario {
        let yaml = """
        name: staging
        start: 2026-11-23T00:00:00Z
        days: 3
        seed: 1
        timezone: UTC
        device: {discretion: exact}
        jobs:
          - identifier: test.wallpaper.refresh
            kind: processing
            action: stage-playlist
            stage-playlist:
              library: /nonexistent/library
              switch-times: ["06:00", "12:00", "18:00", "22:00"]
              timezone: UTC
              families: [systemMedium]
              widget: wallpaper
              today-if-missing: \(todayIfMissing)
            resubmit: {calendar: "*-*-* 04:00", timezone: UTC}
            missed: skip
            simulate: \(simulate)
            \(allowance)
          - identifier: test.wallpaper.widget
            kind: timeline
            provider: playlist
            timezone: UTC
            widget: {kind: wallpaper, families: [systemMedium], budget: 50, policy: after-start-of-tomorrow}
        \(faults)
        """
        switch ScenarioFile.parse(yaml: yaml, file: "staging.yaml", defaultStart: Instant(milliseconds: 0), timeZone: "UTC",
                                  searchPath: "/usr/bin:/bin") {
        case .success(let scenario): return Scenario(scenario)
        case .failure(let errors): throw errors
        }
    }

    static func row(_ report: SimulationReport, day: Int) -> SimulationReport.WidgetDay? {
        report.days[day - 1].widgets.first { "\($0.kind)/\($0.family)" == widget }
    }

    @Test func aMissedNightFallsBackToTheLastStagedPlaylistMarkedAndNeverBlank() throws {
        let simulation = Simulation(scenario: try Self.scenario(faults: "faults:\n  - down: {at: +1d2h, for: 4h}"))
        let report = simulation.run()
        #expect(report.violations.isEmpty)
        let day3 = try #require(Self.row(report, day: 3))
        #expect(day3.fallbackMinutes == 240)  // 00:00 until the 04:00 run stages today and reloads
        #expect(day3.fallbackFrom == "2026-11-24")
        #expect(day3.staleMinutes == 0)
        #expect(Self.row(report, day: 2)?.fallbackMinutes == 0)
        #expect(report.text.contains("2026-11-25 wallpaper/systemMedium: fallback to 2026-11-24's playlist from 00:00, 240 min"))
        let lane = try #require(report.widgetLanes.first { $0.widget == Self.widget })
        #expect(lane.marks.contains { $0.kind == "shown-fallback" && $0.detail.hasSuffix("fallback 2026-11-24") })
        #expect(SimulationPicture.svg(report).contains("fallback to 2026-11-24's playlist"))
        // Days 1-2 staged on day 1 (today first), days 3-4 at day 3's 04:00; none on the missed night.
        #expect(simulation.actions.container.stagedDates(folder: "wallpaper") == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"])
    }

    /// Staging runs' days reach the container from the committed run ends, not from the per-run
    /// events (which the simulator leaves off): with those on, the same report.
    @Test func stagedDaysDoNotDependOnThePerRunEvents() throws {
        let scenario = try Self.scenario(faults: "faults:\n  - down: {at: +1d2h, for: 4h}")
        let withEvents = Simulation(scenario: scenario)
        withEvents.routineEvents = true
        let report = withEvents.run()
        #expect(Simulation(scenario: scenario).run() == report)
        #expect(withEvents.actions.container.stagedDates(folder: "wallpaper") == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"])
    }

    @Test func withoutTodayIfMissingTheWholeDayShowsTheFallback() throws {
        let report = Simulation(scenario: try Self.scenario(faults: "faults:\n  - down: {at: +1d2h, for: 4h}",
                                                            todayIfMissing: false)).run()
        let day3 = try #require(Self.row(report, day: 3))
        #expect((1439...1440).contains(day3.fallbackMinutes ?? 0))  // from the midnight reload's end
        #expect(day3.staleMinutes == 0)
    }

    @Test func anExpiredStagingRunLeavesTheDayUnstagedAndTheWidgetFallsBack() throws {
        let simulation = Simulation(scenario: try Self.scenario(
            faults: "faults:\n  - expire-run: {job: test.wallpaper.refresh, run: 2}", todayIfMissing: false))
        let report = simulation.run()
        #expect(report.violations.isEmpty)
        #expect((1439...1440).contains(Self.row(report, day: 3)?.fallbackMinutes ?? 0))
        #expect(!simulation.actions.container.stagedDates(folder: "wallpaper").contains("2026-11-25"))
    }

    /// stage-playlist runs as the action it is (issue 22), not as a stand-in command: one that
    /// overruns gets its expiration through its context, its modelled worker returns what the
    /// stager returns then (exit 1, no results: the widget is not asked to reload) and the run
    /// ends `expired` at the deadline; one that ignores it is killed when the grace ends and the
    /// run ends abandoned (no exit of its own). As a command it ended by SIGTERM or SIGKILL and
    /// still handed in its reload line.
    @Test(arguments: [false, true])
    func anOverrunningStagingRunExpiresAsTheActionItIs(ignoresExpiration: Bool) throws {
        let simulate = ignoresExpiration ? "{duration: 40s, ignores-sigterm: true}" : "{duration: 40s}"
        let simulation = Simulation(scenario: try Self.scenario(simulate: simulate, allowance: "allowance: 30s\n    grace: 5s"))
        let report = simulation.run()
        #expect(report.violations.isEmpty)
        let runs = try simulation.store.recentRuns(limit: 1000).filter { $0.identifier == "test.wallpaper.refresh" }
        #expect(runs.count == 3)
        for run in runs {
            #expect(run.outcome == .expired)
            let took = try #require(run.ended).duration(since: run.started)
            if ignoresExpiration {
                #expect(run.exitStatus == nil && run.signal == nil, "\(run)")
                #expect(took == .seconds(35))
            } else {
                #expect(run.exitStatus == 1 && run.signal == nil, "\(run)")
                #expect(took == .seconds(30))
            }
            // No widget reload came from the expired run.
            let providers = report.jobs.filter { $0.identifier.hasPrefix("test.wallpaper.widget#") }.flatMap(\.runs)
            #expect(!providers.contains { $0.started == run.ended }, "\(run)")
        }
        #expect(simulation.actions.container.stagedDates(folder: "wallpaper").isEmpty)
        #expect(simulation.host.livingActions.isEmpty)
    }

    /// A staging worker that dies (as one that allocates past its memory limit does) ends its run
    /// `crashed` by its signal, stages nothing and asks for no reload.
    @Test func aCrashedStagingWorkerStagesNothing() throws {
        let simulation = Simulation(scenario: try Self.scenario(
            faults: "faults:\n  - crash-run: {job: test.wallpaper.refresh, run: 2}", todayIfMissing: false))
        let report = simulation.run()
        #expect(report.violations.isEmpty)
        let runs = try simulation.store.recentRuns(limit: 1000).filter { $0.identifier == "test.wallpaper.refresh" }
            .sorted { $0.runID < $1.runID }
        let crashed = try #require(runs.dropFirst().first)
        #expect(crashed.outcome == .crashed && crashed.signal == 11, "\(crashed)")
        let providers = report.jobs.filter { $0.identifier.hasPrefix("test.wallpaper.widget#") }.flatMap(\.runs)
        #expect(!providers.contains { $0.started == crashed.ended })
        #expect(!simulation.actions.container.stagedDates(folder: "wallpaper").contains("2026-11-25"))
        #expect((1439...1440).contains(Self.row(report, day: 3)?.fallbackMinutes ?? 0))
    }

    @Test func stagedEveryNightNeverFallsBackAndTheJSONCarriesTheFigure() throws {
        let report = Simulation(scenario: try Self.scenario()).run()
        #expect(report.violations.isEmpty)
        #expect(Self.row(report, day: 2)?.fallbackMinutes == 0)
        #expect(Self.row(report, day: 3)?.fallbackMinutes == 0)
        #expect(!report.text.contains("fallback to"))
        let json = String(decoding: try JSONEncoder().encode(try #require(Self.row(report, day: 3))), as: UTF8.self)
        #expect(json.contains("\"fallback_minutes\":0"))
    }

    /// Before the first staging run the widget waits (not a failed reload, not stale) and is
    /// not retried; it was 240 stale minutes of "provider failed" and 17 failed runs.
    @Test func nothingStagedYetIsWaitingNotAFailedReloadNorAnEmptyTimeline() throws {
        let report = Simulation(scenario: try Self.scenario()).run()
        let day1 = try #require(Self.row(report, day: 1))
        #expect(day1.staleMinutes == 0)
        #expect(day1.staleReason == nil)
        #expect(day1.firstStale == nil)
        #expect(day1.providerCalls == 2)  // added to screen (waiting), then the staging run's reload
    }

    @Test func theReportRepeatsByteForByte() throws {
        let faults = "faults:\n  - down: {at: +1d2h, for: 4h}"
        let a = Simulation(scenario: try Self.scenario(faults: faults)).run()
        let b = Simulation(scenario: try Self.scenario(faults: faults)).run()
        #expect(a.text == b.text)
        #expect(SimulationPicture.svg(a) == SimulationPicture.svg(b))
    }

    @Test func thePlaylistModelDatesTodaysSwitchesAndMarksAFallback() {
        let container = ContainerModel()
        container.begin(runID: 1, folder: "wallpaper", days: ["2026-11-23": .init(switches: [360, 720], assets: ["a", "b"])])
        container.finish(runID: 1, success: true)
        container.begin(runID: 2, folder: "wallpaper", days: ["2026-11-24": .init(switches: [360], assets: ["c"])])
        container.finish(runID: 2, success: false)  // a failed run stages nothing
        let model = PlaylistModel(fingerprint: "zone=UTC\npolicy=atEnd\nfolder=wallpaper")
        let noon = Instant(milliseconds: 1_795_521_600_000)  // 2026-11-24T12:00:00Z
        let timeline = model.timeline(family: "systemMedium", at: noon, container: container)
        #expect(timeline?.fallback == "2026-11-23")
        #expect(timeline?.entries.map(\.date.iso8601) == ["2026-11-24T00:00:00.000Z", "2026-11-24T06:00:00.000Z",
                                                         "2026-11-24T12:00:00.000Z"])
        #expect(timeline?.entries[1].content
            == #"{"asset":"a","fallback":"2026-11-23","rendition":"wallpaper/renditions/2026-11-23/a-systemMedium.jpg"}"#)
        #expect(model.timeline(family: "systemMedium", at: noon, container: ContainerModel()) == nil)
    }

    /// Issue 23: the container keeps staged days per folder, as the real one does: one user's
    /// staging never makes another user's widget look staged. Before, days were kept by date
    /// alone, and bob's widget read alice's days.
    @Test func stagedDaysAreAFoldersOwn() {
        let container = ContainerModel()
        let staging = StagingModel(fingerprint: "folder=wallpaper-{user}\nswitch-times=06:00,12:00\ntimezone=UTC\n"
            + "widget=wallpaper-{user}\ntoday-if-missing=true")
        #expect(staging?.hasPlaceholders == true)
        let mail = staging?.filled(["user": "a@b"])
        #expect(mail?.folder == "wallpaper-a@b")  // a path value, filled as the real options are
        #expect(mail?.widgetKind == "wallpaper-a-at-b")  // a kind: each '@' "-at-"
        let alice = staging?.filled(["user": "alice"])
        let noon = Instant(milliseconds: 1_795_521_600_000)  // 2026-11-24T12:00:00Z
        container.begin(runID: 1, folder: alice?.folder ?? "", days: alice?.days(at: noon, container: container) ?? [:])
        container.finish(runID: 1, success: true)
        #expect(container.stagedDates(folder: "wallpaper-alice") == ["2026-11-24", "2026-11-25"])
        #expect(container.stagedDates(folder: "wallpaper-bob").isEmpty)
        let template = PlaylistModel(fingerprint: "zone=UTC\npolicy=atEnd\nfolder=wallpaper-{user}")
        #expect(template.filled(["user": "alice"]).timeline(family: "systemMedium", at: noon, container: container)?.fallback == nil)
        #expect(template.filled(["user": "bob"]).timeline(family: "systemMedium", at: noon, container: container) == nil)
    }
}
