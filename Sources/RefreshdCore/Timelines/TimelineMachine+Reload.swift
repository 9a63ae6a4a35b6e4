extension TimelineMachine {
    // MARK: Declarations

    mutating func declare(_ definition: WidgetDefinition, at now: Instant, into effects: inout [TimelineEffect]) {
        let kind = definition.kind
        if let old = definitions[kind] {
            for family in old.sortedFamilies where !definition.families.contains(family) {
                withdraw(WidgetID(kind: kind, family: family), at: now, into: &effects)
            }
        }
        definitions[kind] = definition
        for family in definition.sortedFamilies {
            let id = WidgetID(kind: kind, family: family)
            if widgets[id] == nil {
                widgets[id] = WidgetRecord(widget: id)
                insertOrdered(id)
                changed(id)
                if isRestored { request(id, .added, at: now, into: &effects) }
            } else {
                rebudget(id, at: now)
            }
        }
    }

    mutating func undeclare(_ kind: String, at now: Instant, into effects: inout [TimelineEffect]) {
        guard let definition = definitions.removeValue(forKey: kind) else { return }
        for family in definition.sortedFamilies {
            withdraw(WidgetID(kind: kind, family: family), at: now, into: &effects)
        }
    }

    /// Takes a family off screen: its file is removed, its record deleted (its day counters stay).
    mutating func withdraw(_ id: WidgetID, at now: Instant, into effects: inout [TimelineEffect]) {
        guard widgets[id] != nil else { return }
        accountStale(id, until: now)
        widgets[id] = nil
        order.removeAll { $0 == id }
        dirtyWidgets.remove(id)
        touched.remove(id)
        dueAt[id] = nil
        effects.append(.publish(id, entry: nil))
        effects.append(.persist(.deleteWidget(id)))
        effects.append(.log(.withdrawn(id)))
    }

    mutating func insertOrdered(_ id: WidgetID) {
        var low = 0, high = order.count
        while low < high {
            let mid = (low + high) / 2
            if order[mid] < id { low = mid + 1 } else { high = mid }
        }
        order.insert(id, at: low)
    }

    /// A new budget for a widget already on screen: a deferred reload's release follows it (at
    /// once if a slot is free now; unlimited never defers).
    mutating func rebudget(_ id: WidgetID, at now: Instant) {
        guard var w = widgets[id], let definition = definitions[id.kind] else { return }
        if definition.budget.limit == nil { w.ledger.removeAll() }
        if w.queued != nil, w.inFlight == nil {
            switch releaseInstant(&w, definition, at: now) {
            case .none: w.release = now  // a slot is free: released by this event's due pass
            case let .some(release): w.release = release
            }
        }
        widgets[id] = w
        changed(id)
    }

    // MARK: Requests

    mutating func reload(kind: String?, reason: ReloadReason, at now: Instant, into effects: inout [TimelineEffect]) {
        if let kind, definitions[kind] == nil {
            effects.append(.log(.unknownKind(kind, reason)))
            return
        }
        for id in order where kind == nil || id.kind == kind {
            request(id, reason, at: now, into: &effects)
        }
    }

    /// One reload request for one widget: coalesced into a call in flight or a deferred reload,
    /// performed at once if exempt or within budget, deferred otherwise.
    mutating func request(_ id: WidgetID, _ reason: ReloadReason, at now: Instant, into effects: inout [TimelineEffect]) {
        guard isRestored, !isStopping, var w = widgets[id] else { return }
        tally(id, at: now) { $0.requested += 1 }
        if w.inFlight != nil {
            w.queued = w.queued?.merging(reason) ?? ReloadAsk(reason: reason, requested: now)
            widgets[id] = w
            changed(id)
            tally(id, at: now) { $0.coalesced += 1 }
            effects.append(.log(.coalesced(id, reason, into: .afterProviderRun)))
            return
        }
        if let queued = w.queued {
            let merged = queued.merging(reason)
            if reason.isExempt {
                // The exempt reload happens now and stands for the deferred one too.
                w.queued = nil
                w.release = nil
                widgets[id] = w
                launch(id, merged, at: now, into: &effects)
            } else {
                w.queued = merged
                widgets[id] = w
                changed(id)
                tally(id, at: now) { $0.coalesced += 1 }
                effects.append(.log(.coalesced(id, reason, into: .deferred(until: w.release))))
                // Waiting only for the minimum interval is the system's pacing, not staleness.
                if reason.demandsFreshness, isLowPower {
                    startStale(id, .lowPower, at: now, into: &effects)
                } else if reason.demandsFreshness, let definition = definitions[id.kind], budgetRelease(&w, definition, at: now) != nil {
                    startStale(id, .budgetSpent, at: now, into: &effects)
                }
            }
            return
        }
        admit(id, ReloadAsk(reason: reason, requested: now), at: now, into: &effects)
    }

    /// Performs an ask now if it is exempt, or the budget has a slot and the minimum interval
    /// since the last reload has passed; defers it otherwise (spaced: until the interval ends,
    /// without going stale; over budget: until the window frees a slot, stale if it demanded
    /// freshness).
    mutating func admit(_ id: WidgetID, _ ask: ReloadAsk, at now: Instant, into effects: inout [TimelineEffect]) {
        guard var w = widgets[id], let definition = definitions[id.kind] else { return }
        if ask.exempt {
            launch(id, ask, at: now, into: &effects)
            return
        }
        guard let release = releaseInstant(&w, definition, at: now) else {
            launch(id, ask, at: now, into: &effects)  // a slot is free (or unlimited), not too soon
            return
        }
        if isLowPower {
            w.queued = ask
            w.release = nil
            widgets[id] = w
            changed(id)
            tally(id, at: now) { $0.deferred += 1 }
            effects.append(.log(.heldLowPower(id, ask.reason)))
            if ask.demandsFreshness { startStale(id, .lowPower, at: now, into: &effects) }
            return
        }
        if budgetRelease(&w, definition, at: now) == nil, let release, let last = w.lastReload {
            w.queued = ask
            w.release = release
            widgets[id] = w
            changed(id)
            tally(id, at: now) { $0.spaced = ($0.spaced ?? 0) + 1 }
            effects.append(.log(.spaced(id, ask.reason, last: last, interval: definition.minReloadInterval, release: release)))
            return
        }
        let limit = definition.budget.limit ?? 0
        w.queued = ask
        w.release = release
        widgets[id] = w
        changed(id)
        tally(id, at: now) { $0.deferred += 1 }
        effects.append(.log(.deferred(id, ask.reason, used: used(id, w, definition, at: now), limit: limit,
                                      window: definition.window, release: release)))
        if ask.demandsFreshness { startStale(id, .budgetSpent, at: now, into: &effects) }
    }

    /// Asks the provider: counts the reload (unless exempt), marks the call in flight.
    mutating func launch(_ id: WidgetID, _ ask: ReloadAsk, at now: Instant, into effects: inout [TimelineEffect]) {
        guard var w = widgets[id], let definition = definitions[id.kind] else { return }
        var used: Int?, limit: Int?
        if !ask.exempt, let budgetLimit = definition.budget.limit {
            Self.prune(&w.ledger, window: definition.window, at: now)
            w.ledgerCeiling = w.ledger.isEmpty ? budgetLimit : max(w.ledgerCeiling, budgetLimit)
            Self.insertSorted(&w.ledger, now)
            let counted = definition.budgetGroup == nil ? w.ledger.count : sharedLedger(id, own: w.ledger, definition, at: now).count
            (used, limit) = (counted, budgetLimit)
        }
        w.inFlight = ask
        w.inFlightSince = now
        w.lastReload = now
        widgets[id] = w
        changed(id)
        if !ask.exempt { rereleaseMates(of: id, at: now) }
        let left = budgetLeft(id, at: now)
        tally(id, at: now) { row in
            if ask.exempt { row.exempt += 1 } else { row.performed += 1 }
            row.providerCalls += 1
            if let left { row.budgetLow = min(row.budgetLow ?? left, left) }
        }
        effects.append(.runProvider(id, reason: ask.reason))
        effects.append(.log(.providerAsked(id, ask.reason, exempt: ask.exempt, used: used, limit: limit,
                                           window: definition.window)))
    }

    // MARK: Provider results

    mutating func finish(_ id: WidgetID, _ result: ProviderResult, at now: Instant, into effects: inout [TimelineEffect]) {
        guard var w = widgets[id], let ask = w.inFlight, let definition = definitions[id.kind] else {
            effects.append(.log(.ignoredResult(id)))
            return
        }
        w.inFlight = nil
        w.inFlightSince = nil
        switch result {
        case let .timeline(timeline, upstreamFetch):
            w.timeline = timeline
            w.timelineReceived = now
            w.lastSuccess = now
            w.lastFailure = nil
            w.policyDue = timeline.policyReload(receivedAt: now)
            w.policyReason = switch timeline.policy {
            case .atEnd: .policyAtEnd
            case .after: .policyAfter
            case .never: nil
            }
            // The shown entry is re-chosen from the new timeline below (processDue); until its
            // first entry's date, the old entry stays on screen.
            if w.shown != nil { w.shown?.index = nil }
            widgets[id] = w
            if upstreamFetch { tally(id, at: now) { $0.upstreamFetches += 1 } }
            effects.append(.log(.accepted(id, entries: timeline.entries.count, policy: timeline.policy,
                                          nextReload: w.policyDue)))
            endStale(id, at: now, into: &effects)
            publishCurrent(id, at: now, force: true, into: &effects)
        case let .failed(reason, expired):
            w.lastFailure = expired ? "expired" : reason
            if ask.demandsFreshness, let retry = definition.failureRetry {
                let again = now + retry
                if w.policyDue.map({ again < $0 }) ?? true {
                    w.policyDue = again
                    w.policyReason = .retry
                }
            }
            widgets[id] = w
            tally(id, at: now) { $0.failed += 1 }
            effects.append(.log(.failed(id, reason: reason, expired: expired,
                                        keptEntries: w.timeline?.entries.count ?? 0)))
            if ask.demandsFreshness {
                startStale(id, expired ? .providerExpired : .providerFailed, at: now,
                           detail: expired ? nil : reason, into: &effects)
            }
        case let .waiting(reason):
            waited(id, w, reason: reason, into: &effects)
        }
        changed(id)
        resumeQueued(id, at: now, into: &effects)
    }

    /// The reload that waited for the call in flight goes through admission now.
    mutating func resumeQueued(_ id: WidgetID, at now: Instant, into effects: inout [TimelineEffect]) {
        guard !isStopping, var w = widgets[id], w.inFlight == nil, let queued = w.queued else { return }
        w.queued = nil
        w.release = nil
        widgets[id] = w
        admit(id, queued, at: now, into: &effects)
    }

    // MARK: Time

    /// Everything due for one widget at `now`: the entry shown, the policy's reload, a deferred
    /// reload's release.
    mutating func processDue(_ id: WidgetID, at now: Instant, into effects: inout [TimelineEffect]) {
        publishCurrent(id, at: now, force: false, into: &effects)
        guard isRestored, !isStopping, let w = widgets[id], w.inFlight == nil else { return }
        if let due = w.policyDue, due <= now {
            let reason = w.policyReason ?? .policyAtEnd
            widgets[id]?.policyDue = nil
            widgets[id]?.policyReason = nil
            changed(id)
            request(id, reason, at: now, into: &effects)
        }
        if let w = widgets[id], w.inFlight == nil, let queued = w.queued, let release = w.release, release <= now {
            widgets[id]?.queued = nil
            widgets[id]?.release = nil
            admit(id, queued, at: now, into: &effects)
        }
    }

    /// Publishes the widget's current entry (the last one dated at or before `now`) if it is not
    /// the one shown, or always when `force` (a new timeline, a restore).
    mutating func publishCurrent(_ id: WidgetID, at now: Instant, force: Bool, into effects: inout [TimelineEffect]) {
        guard var w = widgets[id], let timeline = w.timeline, let index = timeline.currentIndex(at: now) else {
            if force, let shown = widgets[id]?.shown {
                effects.append(.publish(id, entry: shown.entry))
            }
            return
        }
        if !force, w.shown?.index == index { return }
        let entry = timeline.entries[index]
        let since = (w.shown?.entry == entry && w.shown?.index == index) ? w.shown?.since ?? now : now
        w.shown = ShownEntry(entry: entry, since: since, index: index)
        widgets[id] = w
        changed(id)
        effects.append(.publish(id, entry: entry))
        effects.append(.log(.published(id, entryDate: entry.date)))
    }
}
