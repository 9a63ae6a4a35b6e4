import Foundation
import RefreshdCore

/// The live activities side by side in a replay (issue 34): per activity and UTC day, its
/// updates, the states it reached and how it ended, as refreshd recorded them, as the replay
/// recorded them (the same activity machine's steps, in the simulation's store), and with the
/// other files.
///
/// Both sides are read the same way, from the steps a store kept (`WorldEvent.What.activity`,
/// one per state change, with the updates applied so far; bounded with the run history): a
/// day's updates are those counted by its last step since the step before, so an update falls
/// on the day of the next state change (or of `TO`, from a live activity's record).
extension ReplayComparison {
    /// One activity's step as a store kept it; `to` nil for the count read from a live
    /// activity's record at the end.
    package struct ActivityStep: Sendable, Equatable {
        package var id: String
        package var at: Instant
        package var to: String?
        package var cause: String?
        /// Updates applied to it so far.
        package var updates: Int

        package init(id: String, at: Instant, to: String?, cause: String?, updates: Int) {
            self.id = id
            self.at = at
            self.to = to
            self.cause = cause
            self.updates = updates
        }
    }

    /// One activity's figures over a day or the period.
    package struct ActivityFigures: Sendable, Encodable, Equatable {
        package var updates = 0
        /// The states reached, in order (`active`, `stale`, `ended`, `dismissed`...).
        package var states: [String] = []
        /// Why it ended (the cause of its `ended`: `ended-by-request`, `owner-failed`...);
        /// nil when it did not end.
        package var end: String?

        /// `steps`: one activity's, in time order; those in `from..<to` are counted.
        init(_ steps: [ActivityStep], from: Instant, to: Instant) {
            // The count so far never goes down (a step without it reads 0).
            var before = 0, last = 0
            for step in steps where step.at < to {
                last = max(last, step.updates)
                if step.at < from { before = last }
            }
            let inside = steps.filter { $0.at >= from && $0.at < to }
            updates = last - before
            states = inside.compactMap(\.to)
            end = inside.last { $0.to == ActivityState.ended.rawValue }?.cause
        }

        /// `3 updates, active > ended (ended-by-request) > dismissed`.
        package var text: String {
            var parts = ["\(updates) update\(updates == 1 ? "" : "s")"]
            if !states.isEmpty {
                parts.append(states.map { $0 == ActivityState.ended.rawValue && end != nil ? "\($0) (\(end!))" : $0 }
                    .joined(separator: " > "))
            }
            return parts.joined(separator: ", ")
        }
    }

    /// One activity on one UTC day (nil: over the period).
    package struct ActivityRow: Sendable, Encodable, Equatable {
        package var day: String?
        package var activity: String
        package var ran: ActivityFigures
        package var replayed: ActivityFigures
        package var whatIf: ActivityFigures?
    }

    /// The activity steps a store kept up to `to`, and each live activity's updates at the end
    /// when it was last touched before `to` (the state read now may hold later updates).
    package static func activitySteps(_ store: any StateStoring, to: Instant) -> [ActivityStep] {
        var steps: [ActivityStep] = ((try? store.records(table: WorldEvent.table)) ?? []).compactMap {
            guard let event = WorldEvent($0), event.at < to, case let .activity(id, state, cause, updates) = event.what else { return nil }
            return ActivityStep(id: id, at: event.at, to: state.rawValue, cause: cause.rawValue, updates: updates)
        }
        let decoder = JSONDecoder()
        for record in (try? store.records(table: ActivityChange.table)) ?? [] {
            guard let activity = try? decoder.decode(Activity.self, from: Data(record.value.utf8)),
                  (activity.lastUpdateTimestamp ?? activity.stateSince) < to else { continue }
            steps.append(ActivityStep(id: activity.id, at: to - .milliseconds(1), to: nil, cause: nil, updates: activity.updatesApplied))
        }
        // Keys sort by instant, then by name: at one millisecond, in the order of the lifecycle.
        func rank(_ step: ActivityStep) -> Int {
            step.to.flatMap { ActivityState(rawValue: $0) }.map { ActivityState.allCases.firstIndex(of: $0) ?? 0 } ?? 99
        }
        return steps.sorted { ($0.at, $0.id, rank($0)) < ($1.at, $1.id, rank($1)) }
    }

    /// Adds the activities: rows per UTC day and activity and over the period, and their part
    /// of the simulator's error (the replay with the same files against what ran).
    package mutating func compareActivities(ran: [ActivityStep], replayed: [ActivityStep], whatIf: [ActivityStep]?) {
        let sides = [ran, replayed, whatIf ?? []].map { Dictionary(grouping: $0, by: \.id) }
        let inPeriod: (ActivityStep) -> Bool = { [from, to] in $0.at >= from && $0.at < to }
        let names = Set(sides.flatMap { $0.values.joined().filter(inPeriod).map(\.id) }).sorted { NaturalOrder.less($0, $1) }
        let dayNames = Set(sides.flatMap { $0.values.joined().filter(inPeriod).map { Self.dayLabel($0.at) } }).sorted()
        func row(_ day: String?, _ id: String) -> ActivityRow? {
            var (a, b) = (from, to)
            if let day, let midnight = ISO8601.parse(day + "T00:00:00Z") {
                (a, b) = (max(from, midnight), min(to, midnight + .seconds(86_400)))
            }
            let figures = sides.map { ActivityFigures($0[id] ?? [], from: a, to: b) }
            guard sides.contains(where: { ($0[id] ?? []).contains { $0.at >= a && $0.at < b } }) else { return nil }
            return ActivityRow(day: day, activity: id, ran: figures[0], replayed: figures[1], whatIf: whatIf == nil ? nil : figures[2])
        }
        activityDays = dayNames.flatMap { d in names.compactMap { row(d, $0) } }
        activities = names.compactMap { row(nil, $0) }
        for a in activities {
            error.activities += 1
            let updates = abs(a.ran.updates - a.replayed.updates)
            error.activityUpdatesApart += updates
            if a.ran.states != a.replayed.states { error.activityStatesApart += 1 }
            if a.ran.end != a.replayed.end { error.activityEndsApart += 1 }
            if a.ran == a.replayed { error.exactActivities += 1 }
        }
    }

    /// The activities' lines of the table (none without activities).
    var activityText: [String] {
        Self.sectionLines("activities", days: activityDays, totals: activities) {
            ($0.day, $0.activity, [$0.ran.text, $0.replayed.text] + ($0.whatIf.map { [$0.text] } ?? []))
        }
    }

    /// The activities' part of the error line.
    var activityErrorText: String {
        guard error.activities > 0 else { return "" }
        return "; activities: updates \(error.activityUpdatesApart) apart, states \(error.activityStatesApart) apart, "
            + "ends \(error.activityEndsApart) apart; \(error.exactActivities) of \(error.activities) activities exact"
    }
}

extension Simulation {
    /// The activity steps this simulation's store kept up to `to` (after `run`), read as a
    /// replay reads the state's (`ReplayComparison.activitySteps`).
    package func activitySteps(to: Instant) -> [ReplayComparison.ActivityStep] {
        ReplayComparison.activitySteps(store, to: to)
    }
}
