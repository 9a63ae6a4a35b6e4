extension TimelineMachine {
    /// Checks every rule of the machine's state after an event (at the last event's instant):
    /// never more counted reloads in any window than the budget; a shown entry is the one a
    /// provider returned for its place; a deferred reload is released at the instant the window
    /// frees a slot; nothing due is left waiting; the deadline is the earliest due instant.
    /// Linear in widgets, ledgers and spans; no strings are built unless something is wrong.
    package func checkInvariants() -> [TimelineViolation] {
        var found: [TimelineViolation] = []
        if order.count != widgets.count || zip(order, order.dropFirst()).contains(where: { !($0 < $1) }) {
            found.append(.init(.widgetIndexMismatch, nil, "order lists \(order.count) widgets, \(widgets.count) kept"))
        }
        guard let now = lastEventAt else { return found }
        for id in order {
            guard let w = widgets[id] else {
                found.append(.init(.widgetIndexMismatch, id, "listed in order but not kept"))
                continue
            }
            guard let definition = definitions[id.kind], definition.families.contains(id.family) else {
                found.append(.init(.widgetIndexMismatch, id, "kept but not declared"))
                continue
            }
            checkLedger(id, w, definition, into: &found)
            checkShown(id, w, at: now, into: &found)
            checkWaiting(id, w, definition, at: now, into: &found)
            checkStale(id, w, into: &found)
        }
        checkGroups(into: &found)
        let expected = computeDeadline(at: now)
        if expected != nextDeadline {
            found.append(.init(.deadlineMismatch, nil,
                               "next deadline \(nextDeadline.map(\.iso8601) ?? "none"), expected \(expected.map(\.iso8601) ?? "none")"))
        }
        return found
    }

    private func checkLedger(_ id: WidgetID, _ w: WidgetRecord, _ definition: WidgetDefinition,
                             into found: inout [TimelineViolation]) {
        if definition.budget.limit == nil, !w.ledger.isEmpty {
            found.append(.init(.ledgerInvalid, id, "\(w.ledger.count) counted reloads kept for an unlimited budget"))
        }
        var low = 0
        for high in w.ledger.indices {
            if high > 0, w.ledger[high] < w.ledger[high - 1] {
                found.append(.init(.ledgerInvalid, id, "ledger out of order at \(high)"))
                return
            }
            while w.ledger[low] + definition.window <= w.ledger[high] { low += 1 }
            let inWindow = high - low + 1
            if inWindow > w.ledgerCeiling {
                found.append(.init(.budgetExceeded, id,
                                   "\(inWindow) counted reloads in \(TimelineLog.windowText(definition.window)) from \(w.ledger[low]) to \(w.ledger[high]), budget \(w.ledgerCeiling)"))
                return
            }
        }
    }

    /// A budget shared by a group: never more counted reloads of its members together in any
    /// window than the largest budget in force while they were counted.
    private func checkGroups(into found: inout [TimelineViolation]) {
        var groups: [String: [WidgetID]] = [:]
        for id in order { if let group = definitions[id.kind]?.budgetGroup { groups[group, default: []].append(id) } }
        for (group, members) in groups.sorted(by: { $0.key < $1.key }) where members.count > 1 {
            guard let definition = definitions[members[0].kind] else { continue }
            let ledger = members.flatMap { widgets[$0]?.ledger ?? [] }.sorted()
            let ceiling = members.map { widgets[$0]?.ledgerCeiling ?? 0 }.max() ?? 0
            var low = 0
            for high in ledger.indices {
                while ledger[low] + definition.window <= ledger[high] { low += 1 }
                if high - low + 1 > ceiling {
                    found.append(.init(.budgetExceeded, members[0],
                                       "\(high - low + 1) counted reloads of budget group \(group) from \(ledger[low]) to \(ledger[high]), budget \(ceiling)"))
                    break
                }
            }
        }
    }

    private func checkShown(_ id: WidgetID, _ w: WidgetRecord, at now: Instant, into found: inout [TimelineViolation]) {
        if let shown = w.shown, let index = shown.index {
            guard let timeline = w.timeline, index < timeline.entries.count, timeline.entries[index] == shown.entry else {
                found.append(.init(.publishedNotReturned, id, "shown entry of \(shown.entry.date) is not entry \(index) of the timeline"))
                return
            }
        }
        if let timeline = w.timeline, let current = timeline.currentIndex(at: now), w.shown?.index != current {
            found.append(.init(.entryNotPublished, id,
                               "entry \(current) of \(timeline.entries[current].date) is due, shown \(w.shown?.index.map(String.init) ?? "none")"))
        }
        if w.shown != nil, w.timeline == nil {
            found.append(.init(.publishedNotReturned, id, "an entry is shown but no provider returned a timeline"))
        }
    }

    private func checkWaiting(_ id: WidgetID, _ w: WidgetRecord, _ definition: WidgetDefinition, at now: Instant,
                              into found: inout [TimelineViolation]) {
        let acting = isRestored && !isStopping
        if w.inFlight == nil, let queued = w.queued {
            if queued.exempt {
                found.append(.init(.releaseWrong, id, "an exempt reload is deferred"))
            }
            // Released when both the budget's window and the minimum interval allow it.
            let spacing = Self.spacingEnd(w, definition)
            var budgetSlot: Instant??  // nil: the budget has a slot (or is unlimited)
            var usedText = "unlimited budget"
            if let limit = definition.budget.limit {
                let ledger = definition.budgetGroup == nil ? w.ledger : sharedLedger(id, definition, at: now)
                let used = definition.budgetGroup == nil ? Self.usedInWindow(ledger, window: definition.window, at: now) : ledger.count
                usedText = "\(used)/\(limit) used"
                if used >= limit { budgetSlot = .some(limit == 0 ? nil : ledger[ledger.count - limit] + definition.window) }
            }
            let expected: Instant?
            if isLowPower { budgetSlot = .some(nil) }  // held until Low Power Mode ends
            switch budgetSlot {
            case .none: expected = spacing
            case .some(.none): expected = nil
            case let .some(.some(slot)): expected = max(slot, spacing ?? slot)
            }
            if budgetSlot == nil, spacing == nil {
                if acting { found.append(.init(.releaseWrong, id, "deferred with \(usedText) and no interval to wait: a slot is free")) }
            } else if w.release != expected {
                found.append(.init(.releaseWrong, id,
                                   "released at \(w.release.map(\.iso8601) ?? "never"), the budget and the minimum interval allow it at \(expected.map(\.iso8601) ?? "never")"))
            }
            if acting, let release = w.release, release <= now {
                found.append(.init(.dueNotActed, id, "deferred reload due at \(release) still waits"))
            }
        }
        if w.inFlight == nil, w.queued == nil, w.release != nil {
            found.append(.init(.releaseWrong, id, "a release instant without a deferred reload"))
        }
        if acting, w.inFlight == nil, let due = w.policyDue, due <= now {
            found.append(.init(.dueNotActed, id, "policy reload due at \(due) was not asked for"))
        }
    }

    private func checkStale(_ id: WidgetID, _ w: WidgetRecord, into found: inout [TimelineViolation]) {
        if (w.stale == nil) != (w.staleAccountedUntil == nil) {
            found.append(.init(.staleSpanInvalid, id, "open span and its accounting disagree"))
        }
        if let open = w.stale, open.end != nil {
            found.append(.init(.staleSpanInvalid, id, "the open span has an end"))
        }
        for span in w.recentSpans {
            guard let end = span.end, end >= span.start else {
                found.append(.init(.staleSpanInvalid, id, "closed span from \(span.start) has no end or ends before it starts"))
                return
            }
        }
        if w.recentSpans.count > WidgetRecord.recentSpanLimit {
            found.append(.init(.staleSpanInvalid, id, "\(w.recentSpans.count) closed spans kept, limit \(WidgetRecord.recentSpanLimit)"))
        }
    }
}
