/// The widget timelines' deterministic machine: every time rule of WidgetKit's timelines and
/// reload budget, as a function of events and the current instant.
///
/// It shows each family's entries at their dates, reloads by the timeline's policy, counts
/// non-exempt reloads against a budget per widget over a trailing window (deferring, never
/// dropping, a reload over budget to the exact instant a slot frees), coalesces requests, keeps
/// the last good timeline when a provider fails, records stale spans and per-day counters. It
/// never reads a clock or does I/O: the runtime sends events with their instant, carries out the
/// effects in order, and arms one wake-up at the minimum of every machine's `nextDeadline`.
///
/// ```swift
/// var machine = TimelineMachine()
/// var effects: [TimelineEffect] = []
/// machine.handle(.declare(WidgetDefinition(kind: "photos", families: [.systemSmall], job: "photos.provider")),
///                at: now, into: &effects)
/// machine.handle(.restore(.init()), at: now, into: &effects)   // asks for the first timeline
/// // [.runProvider(photos/systemSmall, reason: .added), .persist(...), .log(...)]
/// ```
package struct TimelineMachine: Sendable {
    /// Declared kinds.
    package internal(set) var definitions: [String: WidgetDefinition] = [:]
    /// Every widget on screen, by id; `order` lists them sorted, so effects come out in one order.
    var widgets: [WidgetID: WidgetRecord] = [:]
    var order: [WidgetID] = []
    /// `.restore` has been handled: reloads may be asked for.
    package internal(set) var isRestored = false
    /// Inside the restore: rows of days after the latest saved one may be created.
    var isRestoring = false
    package internal(set) var isStopping = false
    /// Low Power Mode is on: counted reloads are held until it ends.
    package internal(set) var isLowPower = false
    /// The earliest instant the machine must act without an outside event (an entry's date, a
    /// policy reload, a deferred reload's release, the counter-day midnight that splits a stale widget's
    /// counters); nil when nothing is due ever. Recomputed after every event.
    package internal(set) var nextDeadline: Instant?
    /// The instant of the last event handled (the invariants and the snapshot look at it).
    package internal(set) var lastEventAt: Instant?
    /// The counter day (UTC unless `countingDays` says otherwise) counters are kept for (days since the epoch); it never moves back, so a wall
    /// clock stepped back keeps counting into the latest day.
    var counterDay: Int64 = Int64.min
    var rows: [RowKey: WidgetDayCounter] = [:]
    /// Widgets whose record changed in this event (persisted at its end once restored).
    var dirtyWidgets: Set<WidgetID> = []
    var dirtyRows: Set<RowKey> = []
    /// Widgets this event changed: their due instant is recomputed at its end.
    var touched: Set<WidgetID> = []
    /// Each widget's own next deadline (`widgetDeadline`), so an event looks only at the widgets
    /// it changed or that are due, never at every widget.
    var dueAt: [WidgetID: Instant] = [:]

    /// A counter row's identity: the day (days since the epoch) and the widget.
    struct RowKey: Hashable, Comparable, Sendable {
        var day: Int64
        var widget: WidgetID
        static func < (lhs: RowKey, rhs: RowKey) -> Bool {
            lhs.day != rhs.day ? lhs.day < rhs.day : lhs.widget < rhs.widget
        }
    }

    static let dayMilliseconds: Int64 = 86_400_000

    /// Where counter days begin (UTC by default). Set before the restore: rows already made
    /// keep the days they were counted on.
    package var countingDays: CountingDays = .utc

    package init(countingDays: CountingDays = .utc) {
        self.countingDays = countingDays
    }

    /// Feeds one event; returns its effects in order.
    package mutating func handle(_ event: TimelineEvent, at now: Instant) -> [TimelineEffect] {
        var effects: [TimelineEffect] = []
        handle(event, at: now, into: &effects)
        return effects
    }

    /// Feeds one event, appending its effects (a buffer the runtime reuses).
    package mutating func handle(_ event: TimelineEvent, at now: Instant, into effects: inout [TimelineEffect]) {
        lastEventAt = now
        var everyWidget = advanceDay(to: now)
        switch event {
        case let .declare(definition):
            declare(definition, at: now, into: &effects)
        case let .undeclare(kind):
            undeclare(kind, at: now, into: &effects)
        case let .restore(state):
            restore(state, at: now, into: &effects)
            everyWidget = true
        case let .reload(kind, reason):
            reload(kind: kind, reason: reason, at: now, into: &effects)
        case let .providerFinished(id, result):
            finish(id, result, at: now, into: &effects)
        case .timerFired:
            break  // everything due at `now` is done below, whatever woke the machine
        case .clockChanged:
            everyWidget = true  // a step back changes which entry is current
            unspaceFuture(at: now)
        case let .lowPower(on):
            guard on != isLowPower else { break }
            isLowPower = on
            releaseHeld(at: now)  // on: every waiting reload is held; off: released when allowed
            everyWidget = true
        case .shutdown:
            isStopping = true
            everyWidget = true
            for id in order where widgets[id]?.stale != nil { accountStale(id, until: now) }
        }
        if everyWidget {
            for id in order { processDue(id, at: now, into: &effects) }
            dueAt.removeAll(keepingCapacity: true)
            for id in order { if let w = widgets[id], let t = widgetDeadline(w, at: now) { dueAt[id] = t } }
        } else {
            var candidates = touched
            for (id, t) in dueAt where t <= now { candidates.insert(id) }
            for id in candidates.sorted() { processDue(id, at: now, into: &effects) }
            touched.formUnion(candidates)
            for id in touched {
                dueAt[id] = widgets[id].flatMap { widgetDeadline($0, at: now) }
            }
        }
        touched.removeAll(keepingCapacity: true)
        flush(into: &effects)
        nextDeadline = isStopping ? nil : dueAt.values.min()
    }

    /// Notes that a widget's state changed in this event: its record is persisted (once the
    /// machine is restored: a blank record must not overwrite the saved one) and its due
    /// instant recomputed.
    mutating func changed(_ id: WidgetID) {
        touched.insert(id)
        if isRestored { dirtyWidgets.insert(id) }
    }

    // MARK: Queries

    /// The definition of a declared kind (the runtime reads the provider's job from it).
    package func definition(ofKind kind: String) -> WidgetDefinition? { definitions[kind] }

    /// The widgets on screen, sorted.
    package var widgetIDs: [WidgetID] { order }

    /// A widget's whole state.
    package func record(_ id: WidgetID) -> WidgetRecord? { widgets[id] }

    /// Today's counter rows (the counter day of the latest event), sorted by widget.
    package var todaysCounters: [WidgetDayCounter] {
        rows.filter { $0.key.day == counterDay }.sorted { $0.key < $1.key }.map(\.value)
    }

    // MARK: Bookkeeping

    /// The day `now` counts on (never before the latest day counted).
    func countingDay(_ now: Instant) -> Int64 { max(counterDay, day(of: now)) }

    /// The counter day of an instant (see `countingDays`).
    func day(of instant: Instant) -> Int64 { countingDays.day(of: instant) }

    /// The first instant of a counter day.
    func startOfDay(_ day: Int64) -> Instant { countingDays.start(of: day) }

    /// Moves the counters to `now`'s day, first putting every stale widget's time up to `now`
    /// into the days it belongs to.
    /// True when the day changed (every widget's midnight deadline moves).
    mutating func advanceDay(to now: Instant) -> Bool {
        let day = day(of: now)
        guard day > counterDay else { return false }
        let previous = counterDay
        counterDay = day
        guard previous != Int64.min else { return true }
        let dayStart = startOfDay(day)
        for id in order {
            guard let span = widgets[id]?.stale else { continue }
            accountStale(id, until: now)
            // The new day's row says at once that the widget is stale from its first instant.
            withRow(id, day: day, at: now) { row in
                if row.firstStale == nil {
                    row.firstStale = max(span.start, dayStart)
                    row.staleReason = span.reason
                }
            }
        }
        return true
    }

    /// Emits the changed records and counter rows, once each, in a stable order; forgets rows
    /// of past days.
    mutating func flush(into effects: inout [TimelineEffect]) {
        if !dirtyWidgets.isEmpty {
            for id in dirtyWidgets.sorted() {
                if let record = widgets[id] { effects.append(.persist(.putWidget(record))) }
            }
            dirtyWidgets.removeAll(keepingCapacity: true)
        }
        if !dirtyRows.isEmpty {
            for key in dirtyRows.sorted() {
                if let row = rows[key] { effects.append(.persist(.putCounters(row))) }
            }
            dirtyRows.removeAll(keepingCapacity: true)
        }
        if rows.count > order.count {
            rows = rows.filter { $0.key.day >= counterDay }
        }
    }

    /// The minimum over widgets of their next entry switch and (unless a provider call is in
    /// flight) their policy reload and deferred release; and the next counter-day midnight if any widget
    /// is stale (its stale minutes are split there).
    /// Recomputed from scratch over every widget: what `nextDeadline` must equal (the
    /// invariants compare them).
    func computeDeadline(at now: Instant) -> Instant? {
        guard !isStopping else { return nil }
        return order.compactMap { widgets[$0].flatMap { widgetDeadline($0, at: now) } }.min()
    }

    /// One widget's next deadline: its next entry switch; unless a provider call is in flight,
    /// its policy reload and its deferred reload's release; while stale, the next counter-day midnight.
    func widgetDeadline(_ w: WidgetRecord, at now: Instant) -> Instant? {
        var next = Self.nextSwitch(w, at: now)
        func consider(_ t: Instant?) {
            if let t, next == nil || t < next! { next = t }
        }
        if isRestored, w.inFlight == nil {
            consider(w.policyDue)
            if w.queued != nil { consider(w.release) }
        }
        if w.stale != nil, counterDay != Int64.min {
            consider(startOfDay(counterDay + 1))
        }
        return next
    }

    /// The date of the first entry after `now` in the widget's timeline.
    static func nextSwitch(_ w: WidgetRecord, at now: Instant) -> Instant? {
        guard let timeline = w.timeline else { return nil }
        let next = (timeline.currentIndex(at: now) ?? -1) + 1
        return next < timeline.entries.count ? timeline.entries[next].date : nil
    }

    /// The row of `day` for a widget, created with the budget left at `now` if new.
    ///
    /// A past day's row that is not in memory may exist in the store, and writing a fresh one
    /// would replace it: such counts go to the current day instead (only a wall clock stepped
    /// back leads here). During the restore, past days after the latest saved row are known to
    /// be empty (refreshd was down) and get rows of their own.
    mutating func withRow(_ id: WidgetID, day: Int64, at now: Instant, _ body: (inout WidgetDayCounter) -> Void) {
        var key = RowKey(day: day, widget: id)
        if day < counterDay, rows[key] == nil, !isRestoring { key.day = counterDay }
        var row = rows[key] ?? {
            var fresh = WidgetDayCounter(day: ISO8601.day(Instant.clamped(key.day * Self.dayMilliseconds)), widget: id)
            fresh.budgetLow = budgetLeft(id, at: now)
            return fresh
        }()
        body(&row)
        rows[key] = row
        dirtyRows.insert(key)
    }

    /// Counts something on `now`'s counting day.
    mutating func tally(_ id: WidgetID, at now: Instant, _ body: (inout WidgetDayCounter) -> Void) {
        withRow(id, day: countingDay(now), at: now, body)
    }
}
