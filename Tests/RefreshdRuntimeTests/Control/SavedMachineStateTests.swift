import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
import RefreshdStore
import RefreshdDaemon

/// Offline status: the records a real timeline machine and activity machine committed, folded
/// into an `InMemoryStore`, read back and rebuilt into snapshots on virtual time.
@Suite struct SavedMachineStateTests {
    static let t0 = Instant(milliseconds: 1_795_000_000_000)  // 2026-11-18, a UTC day boundary aside
    static let small = WidgetID(kind: "wallpaper", family: .systemSmall)
    static let definition = WidgetDefinition(kind: "wallpaper", families: [.systemSmall], job: "test.wall", budget: .limited(5))

    /// Applies the machine's persist effects to a store, as the runtime commits them.
    static func commit(_ effects: [TimelineEffect], to store: InMemoryStore, encoder: JSONEncoder) throws {
        var changes: [StateChange] = []
        for case let .persist(change) in effects {
            switch change {
            case let .putWidget(record):
                changes.append(.putRecord(MachineRecord(table: change.table, key: change.key,
                                                        value: String(decoding: try encoder.encode(record), as: UTF8.self))))
            case let .putCounters(counter):
                changes.append(.putRecord(MachineRecord(table: change.table, key: change.key,
                                                        value: String(decoding: try encoder.encode(counter), as: UTF8.self))))
            case .deleteWidget:
                changes.append(.deleteRecord(table: change.table, key: change.key))
            }
        }
        try store.apply(changes)
    }

    /// A widget that got a one-hour `atEnd` timeline at t0 and one explicit reload.
    static func savedWidget() throws -> (InMemoryStore, TimelineMachine) {
        let store = InMemoryStore()
        let encoder = JSONEncoder()
        var machine = TimelineMachine()
        var effects = machine.handle(.declare(definition), at: t0)
        effects += machine.handle(.restore(.init()), at: t0)
        let timeline = Timeline(entries: [TimelineEntry(date: t0, content: #"{"asset":"a"}"#),
                                          TimelineEntry(date: t0 + .seconds(3600), content: #"{"asset":"b"}"#)], policy: .atEnd)
        effects += machine.handle(.providerFinished(small, .timeline(timeline, upstreamFetch: true)), at: t0 + .seconds(1))
        effects += machine.handle(.reload(kind: "wallpaper", reason: .explicitAPI), at: t0 + .seconds(60))
        effects += machine.handle(.providerFinished(small, .timeline(timeline, upstreamFetch: false)), at: t0 + .seconds(61))
        try commit(effects, to: store, encoder: encoder)
        return (store, machine)
    }

    @Test func anOfflineSnapshotMatchesTheMachineBetweenEvents() throws {
        let (store, machine) = try Self.savedWidget()
        let saved = try SavedMachineState(store: store)
        #expect(saved.widgets.count == 1 && saved.unreadable == 0)
        let at = Self.t0 + .seconds(600)
        let offline = saved.timelineSnapshot(at: at, definitions: [Self.definition])
        var live = machine.snapshot(at: at)
        live.nextDeadline = offline.nextDeadline  // the throwaway machine's own bookkeeping
        #expect(offline.widgets == live.widgets)
        #expect(offline.widgets.first?.budgetUsed == 2 && offline.widgets.first?.budgetLeft == 3)
        #expect(offline.widgets.first?.shown?.content == #"{"asset":"a"}"#)
    }

    @Test func aPolicyReloadDueWhileDownIsStaleAndDueNowWithoutSpendingBudget() throws {
        let (store, _) = try Self.savedWidget()
        let later = Self.t0 + .seconds(7200)  // past the last entry: atEnd fell due while down
        let w = try #require(try SavedMachineState(store: store).timelineSnapshot(at: later, definitions: [Self.definition]).widgets.first)
        #expect(w.staleReason == .refreshdDown)
        #expect(w.staleSince == Self.t0 + .seconds(3600), "stale from the instant the policy asked")
        #expect(w.providerRunningSince == nil)
        #expect(w.nextReload == later && w.nextReloadWhy == .policy)
        #expect(w.budgetUsed == 2, "nothing runs while refreshd is down")
        #expect(w.shown?.content == #"{"asset":"b"}"#)
    }

    @Test func withoutJobFilesTheBudgetComesFromTheRecord() throws {
        let (store, _) = try Self.savedWidget()
        let w = try SavedMachineState(store: store).timelineSnapshot(at: Self.t0 + .seconds(600)).widgets.first
        #expect(w?.budgetLimit == 5 && w?.budgetUsed == 2)
    }

    @Test func activitiesPastTheirStaleDateShowStaleStampedAtIt() throws {
        var machine = ActivityMachine()
        var effects: [ActivityEffect] = []
        machine.handle(.restore([]), at: Self.t0, into: &effects)
        machine.handle(.request(ActivityRequest(id: "pack", typeName: "Download", namespace: "default",
                                                content: #"{"progress":0.4}"#, staleDate: Self.t0 + .seconds(600))),
                       at: Self.t0, into: &effects)
        let encoder = JSONEncoder()
        var records: [MachineRecord] = []
        for case let .persist(.save(activity)) in effects {
            records.append(MachineRecord(table: ActivityChange.table, key: activity.id,
                                         value: String(decoding: try encoder.encode(activity), as: UTF8.self)))
        }
        records.append(MachineRecord(table: ActivityChange.table, key: "bad", value: "{not json"))
        let saved = SavedMachineState(widgets: [], counters: [], activities: records)
        #expect(saved.unreadable == 1)
        let before = saved.activitySnapshot(at: Self.t0 + .seconds(60)).activities.first
        #expect(before?.state == .active && before?.progressPercent == 40)
        let after = saved.activitySnapshot(at: Self.t0 + .seconds(900)).activities.first
        #expect(after?.state == .stale && after?.since == Self.t0 + .seconds(600))
        let lines = MachineStatusText.activities(saved.activitySnapshot(at: Self.t0 + .seconds(900)), now: Self.t0 + .seconds(900))
        #expect(lines.contains { $0.contains("pack  Download  stale since") && $0.contains("progress 40%") })
    }

    @Test func reloadStatsKeepTheAskedDaysNewestFirst() throws {
        let (store, _) = try Self.savedWidget()
        var counters = try SavedMachineState(store: store).counters
        #expect(counters.count == 1)
        #expect(counters.first?.requested == 2 && counters.first?.performed == 2 && counters.first?.providerCalls == 2)
        #expect(counters.first?.upstreamFetches == 1)
        var old = try #require(counters.first)
        old.day = "2026-11-01"
        counters.append(old)
        let week = ReloadStats(counters: counters, days: 7, now: Self.t0)
        #expect(week.rows.map(\.day) == [ISO8601.day(Self.t0)])
        let month = ReloadStats(counters: counters, days: 31, now: Self.t0)
        #expect(month.rows.map(\.day) == [ISO8601.day(Self.t0), "2026-11-01"])
        let json = String(decoding: try JSONEncoder().encode(month), as: UTF8.self)
        #expect(json.contains(#""reloads_performed":2"#) && json.contains(#""upstream_fetches":1"#))
        #expect(month.lines.count == 3 && month.lines[1].contains("wallpaper/systemSmall"))
        #expect(ReloadStats(counters: [], days: 1, now: Self.t0).lines.first?.hasPrefix("No widget reloads") == true)
    }

    @Test func watchShowsTheBudgetGaugeAndProgress() throws {
        let (store, _) = try Self.savedWidget()
        let saved = try SavedMachineState(store: store)
        let at = Self.t0 + .seconds(600)
        let w = try #require(saved.timelineSnapshot(at: at, definitions: [Self.definition]).widgets.first)
        #expect(WatchView.widgetLine(w, now: at) == #"wallpaper/systemSmall  budget [####......] 2/5  shown {"asset":"a"}"#)
        #expect(MachineStatusText.percent(0.425 * 100) == "42.5%" && MachineStatusText.percent(60) == "60%")
    }
}
