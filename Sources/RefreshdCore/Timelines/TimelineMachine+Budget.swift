/// When a counted reload may happen: the budget's trailing window (per family, or shared by a
/// budget group), the minimum interval since the last provider call, and Low Power Mode.
/// Pure arithmetic on the widgets' ledgers, used by `admit`, `launch` and the invariants.
extension TimelineMachine {
    /// Nil when a counted reload may happen at `now` (the budget has a slot and the minimum
    /// interval since the last reload has passed); otherwise `.some(instant)` when both allow
    /// it (`.some(nil)` with a budget of 0: never, until the budget changes).
    func releaseInstant(_ w: inout WidgetRecord, _ definition: WidgetDefinition, at now: Instant) -> Instant?? {
        if isLowPower { return .some(nil) }  // held until Low Power Mode ends
        let spacing = spacingRelease(w, definition, at: now)
        switch budgetRelease(&w, definition, at: now) {
        case .none: return spacing.map { .some($0) } ?? .none
        case .some(.none): return .some(.none)
        case let .some(.some(slot)): return .some(max(slot, spacing ?? slot))
        }
    }

    /// When the minimum interval since the widget's last reload ends, if after `now`.
    static func spacingEnd(_ w: WidgetRecord, _ definition: WidgetDefinition) -> Instant? {
        guard definition.minReloadInterval > .zero, let last = w.lastReload else { return nil }
        return last + definition.minReloadInterval
    }

    func spacingRelease(_ w: WidgetRecord, _ definition: WidgetDefinition, at now: Instant) -> Instant? {
        Self.spacingEnd(w, definition).flatMap { $0 > now ? $0 : nil }
    }

    /// The budget alone: nil when a slot is free (or the budget is unlimited); otherwise
    /// `.some(instant)` when the window frees a slot (`.some(nil)` with a budget of 0). Prunes
    /// the ledger to the window.
    func budgetRelease(_ w: inout WidgetRecord, _ definition: WidgetDefinition, at now: Instant) -> Instant?? {
        guard let limit = definition.budget.limit else { return nil }
        Self.prune(&w.ledger, window: definition.window, at: now)
        let ledger = definition.budgetGroup == nil ? w.ledger : sharedLedger(w.widget, own: w.ledger, definition, at: now)
        guard ledger.count >= limit else { return nil }
        if limit == 0 { return .some(nil) }
        return .some(ledger[ledger.count - limit] + definition.window)
    }

    /// After the wall clock stepped back, a last reload "in the future" would hold the next one
    /// for the whole step plus the interval: it counts as made now.
    mutating func unspaceFuture(at now: Instant) {
        for id in order {
            guard var w = widgets[id], let last = w.lastReload, last > now, let definition = definitions[id.kind] else { continue }
            w.lastReload = now
            if w.queued != nil, w.inFlight == nil {
                switch releaseInstant(&w, definition, at: now) {
                case .none: w.release = now
                case let .some(release): w.release = release
                }
            }
            widgets[id] = w
            changed(id)
        }
    }

    /// Low Power Mode turned on (every waiting counted reload is held) or off (every held
    /// reload goes through admission in this event's due pass, or waits for its budget or
    /// interval).
    mutating func releaseHeld(at now: Instant) {
        for id in order {
            guard var w = widgets[id], w.queued != nil, w.inFlight == nil, let definition = definitions[id.kind] else { continue }
            switch releaseInstant(&w, definition, at: now) {
            case .none: w.release = now
            case let .some(release): w.release = release
            }
            widgets[id] = w
            changed(id)
        }
    }

    /// The widgets sharing `id`'s budget, `id` included (itself alone without a group).
    func budgetMates(_ id: WidgetID) -> [WidgetID] {
        guard let group = definitions[id.kind]?.budgetGroup else { return [id] }
        return order.filter { definitions[$0.kind]?.budgetGroup == group }
    }

    /// The counted reloads of every widget sharing `id`'s budget within the window at `now`
    /// (`own`: `id`'s ledger, if it is being changed), sorted.
    func sharedLedger(_ id: WidgetID, own: [Instant]? = nil, _ definition: WidgetDefinition, at now: Instant) -> [Instant] {
        let horizon = now - definition.window
        var merged: [Instant] = []
        for mate in budgetMates(id) {
            let ledger = mate == id ? own ?? widgets[mate]?.ledger ?? [] : widgets[mate]?.ledger ?? []
            merged += ledger.filter { $0 > horizon }
        }
        return merged.sorted()
    }

    /// After a counted reload of a widget in a budget group, the other members' waiting
    /// reloads are released when the shared window (and their interval) allows it.
    mutating func rereleaseMates(of id: WidgetID, at now: Instant) {
        guard definitions[id.kind]?.budgetGroup != nil else { return }
        for mate in budgetMates(id) where mate != id {
            guard var w = widgets[mate], w.queued != nil, w.inFlight == nil, let definition = definitions[mate.kind] else { continue }
            switch releaseInstant(&w, definition, at: now) {
            case .none: w.release = now
            case let .some(release): w.release = release
            }
            widgets[mate] = w
            changed(mate)
        }
    }

    /// Drops counted reloads that left the window `(now - window, now]`.
    static func prune(_ ledger: inout [Instant], window: Duration, at now: Instant) {
        let horizon = now - window
        var drop = 0
        while drop < ledger.count, ledger[drop] <= horizon { drop += 1 }
        if drop > 0 { ledger.removeFirst(drop) }
    }

    static func insertSorted(_ ledger: inout [Instant], _ instant: Instant) {
        if let last = ledger.last, instant < last {
            let index = ledger.firstIndex { $0 > instant } ?? ledger.count
            ledger.insert(instant, at: index)
        } else {
            ledger.append(instant)
        }
    }

    /// The budget left in the window at `now`; nil when unlimited.
    func budgetLeft(_ id: WidgetID, at now: Instant) -> Int? {
        guard let w = widgets[id], let definition = definitions[id.kind],
              let limit = definition.budget.limit else { return nil }
        return max(limit - used(id, w, definition, at: now), 0)
    }

    /// Counted reloads in the window at `now` against `id`'s budget (its group's, if shared).
    func used(_ id: WidgetID, _ w: WidgetRecord, _ definition: WidgetDefinition, at now: Instant) -> Int {
        guard definition.budgetGroup != nil else { return Self.usedInWindow(w.ledger, window: definition.window, at: now) }
        return budgetMates(id).reduce(0) { sum, mate in
            sum + Self.usedInWindow(widgets[mate]?.ledger ?? [], window: definition.window, at: now)
        }
    }

    /// Counted reloads in `(now - window, now]` (and any after `now`, after a clock step back).
    static func usedInWindow(_ ledger: [Instant], window: Duration, at now: Instant) -> Int {
        let horizon = now - window
        var low = 0, high = ledger.count
        while low < high {
            let mid = (low + high) / 2
            if ledger[mid] <= horizon { low = mid + 1 } else { high = mid }
        }
        return ledger.count - low
    }
}
