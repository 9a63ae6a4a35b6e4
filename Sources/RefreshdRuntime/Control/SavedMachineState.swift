import Foundation
import RefreshdCore

/// The widget and live-activity records a store holds (tables `widget`, `widget-day`,
/// `activities`), decoded, and the status snapshots rebuilt from them without a running refreshd.
///
/// `refreshd status`, `stats reloads` and `why` read the state files when refreshd is not
/// running: the machines are restored from the records into throwaway copies and asked for a
/// snapshot at `now`, so an offline status follows exactly the rules the daemon applies at its
/// next start (a policy reload that fell due while it was down shows as stale, "refreshd down";
/// an activity past its stale date shows stale). Nothing is written back. A record that cannot
/// be decoded is counted in `unreadable`, never fatal.
package struct SavedMachineState: Sendable {
    package var widgets: [WidgetRecord]
    package var counters: [WidgetDayCounter]
    package var activities: [Activity]
    /// Records that did not decode (written by another version, or damaged).
    package var unreadable: Int

    /// Decodes the records of the three tables.
    package init(widgets: [MachineRecord], counters: [MachineRecord], activities: [MachineRecord]) {
        let decoder = JSONDecoder()
        var unreadable = 0
        func decode<T: Decodable>(_ records: [MachineRecord], as type: T.Type) -> [T] {
            records.compactMap { record in
                if let value = try? decoder.decode(T.self, from: Data(record.value.utf8)) { return value }
                unreadable += 1
                return nil
            }
        }
        self.widgets = decode(widgets, as: WidgetRecord.self)
        self.counters = decode(counters, as: WidgetDayCounter.self)
        self.activities = decode(activities, as: Activity.self)
        self.unreadable = unreadable
    }

    /// Reads the records from a store (the daemon's, under its lock, or one opened read-only).
    package init(store: any StateStoring) throws {
        self.init(widgets: try store.records(table: TimelineChange.widgetTable),
                  counters: try store.records(table: TimelineChange.counterTable),
                  activities: try store.records(table: ActivityChange.table))
    }

    /// The widgets as a running refreshd would show them at `now`.
    ///
    /// `definitions` (from the job files) give each kind's job, budget and window; a kind with
    /// saved records and no definition gets its budget from the record (the largest in force
    /// when its reloads were counted; the default when it has none). Only families with a record
    /// are shown. What the restore would set in motion (a provider asked at start) is reported
    /// as due now, with the budget the saved ledger shows: nothing runs while refreshd is down.
    package func timelineSnapshot(at now: Instant, definitions: [WidgetDefinition] = []) -> TimelineSnapshot {
        let byKind = Dictionary(definitions.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        let saved = Dictionary(widgets.map { ($0.widget, $0) }, uniquingKeysWith: { first, _ in first })
        var machine = TimelineMachine()
        for (kind, records) in Dictionary(grouping: widgets, by: \.widget.kind).sorted(by: { $0.key < $1.key }) {
            let families = Set(records.map(\.widget.family))
            var definition = byKind[kind] ?? WidgetDefinition(
                kind: kind, families: families, job: "?",
                budget: records.map(\.ledgerCeiling).max().map { $0 > 0 ? .limited($0) : .default } ?? .default)
            definition.families = families
            _ = machine.handle(.declare(definition), at: now)
        }
        _ = machine.handle(.restore(.init(records: widgets, counters: [])), at: now)
        var snapshot = machine.snapshot(at: now)
        for index in snapshot.widgets.indices {
            let w = snapshot.widgets[index]
            guard let record = saved[WidgetID(kind: w.kind, family: w.family)] else { continue }
            guard w.providerRunningSince != nil else { continue }
            // Asked by the restore: refreshd asks when it starts.
            snapshot.widgets[index].providerRunningSince = nil
            snapshot.widgets[index].nextReload = now
            snapshot.widgets[index].nextReloadWhy = record.inFlight != nil || record.policyReason == .retry ? .retry : .policy
            if let limit = w.budgetLimit {
                let window = byKind[w.kind]?.window ?? .seconds(86_400)
                let used = record.ledger.filter { $0 > now - window && $0 <= now }.count
                snapshot.widgets[index].budgetUsed = used
                snapshot.widgets[index].budgetLeft = max(limit - used, 0)
            }
        }
        return snapshot
    }

    /// The activities as a running refreshd would show them at `now`: deadlines that passed
    /// while it was down (stale dates, the 8 h and 12 h limits, dismissals) applied, stamped.
    package func activitySnapshot(at now: Instant, settings: ActivitySettings = ActivitySettings()) -> ActivitySnapshot {
        var machine = ActivityMachine(settings: settings)
        var effects: [ActivityEffect] = []
        machine.handle(.restore(activities), at: now, into: &effects)
        machine.handle(.timerFired, at: now, into: &effects)
        return machine.snapshot()
    }
}
