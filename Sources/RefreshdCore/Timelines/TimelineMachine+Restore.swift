extension TimelineMachine {
    /// What the store held for the timelines when refreshd started, decoded by the runtime.
    package struct RestoredState: Sendable, Hashable {
        /// Every `widget` record.
        package var records: [WidgetRecord]
        /// The `widget-day` rows of the most recent day that has any (more days may be given:
        /// the machine goes on counting into whichever rows it is given).
        package var counters: [WidgetDayCounter]
        /// Widgets whose provider call's request is still pending (never launched): their call
        /// is still in flight, not interrupted.
        package var providersWaiting: Set<WidgetID>

        package init(records: [WidgetRecord] = [], counters: [WidgetDayCounter] = [], providersWaiting: Set<WidgetID> = []) {
            self.records = records
            self.counters = counters
            self.providersWaiting = providersWaiting
        }
    }

    /// Loads saved state, once, after the first declares.
    ///
    /// - Records of widgets no longer declared are deleted.
    /// - The current entry is published at once (entries that passed while down are skipped).
    /// - A provider call that was in flight failed (`interrupted`): stale from when it was asked
    ///   if its reload demanded freshness, and asked again now, budget permitting (the
    ///   interrupted call stays counted). Unless its run never started (its request is still
    ///   pending, `providersWaiting`): then the call is still in flight and its run delivers.
    /// - A policy reload that fell due while refreshd was down makes the widget stale ("refreshd
    ///   down") from the due instant; it is asked for now, budget permitting.
    /// - A deferred reload whose release passed is released now.
    /// - Stale time over the downtime is counted into its days now.
    /// - Declared widgets without a record ask for their first timeline.
    mutating func restore(_ state: RestoredState, at now: Instant, into effects: inout [TimelineEffect]) {
        guard !isRestored else { return }
        isRestored = true
        isRestoring = true
        defer { isRestoring = false }
        for row in state.counters {
            guard let day = ISO8601.dayNumber(row.day) else { continue }
            rows[RowKey(day: day, widget: row.widget)] = row
            counterDay = max(counterDay, day)
        }
        // Budgets shared by a group count every member's ledger: all of them are known before
        // any member is asked to reload.
        for saved in state.records where widgets[saved.widget] != nil && definitions[saved.widget.kind]?.budgetGroup != nil {
            widgets[saved.widget]?.ledger = saved.ledger.sorted()
        }
        var restored: Set<WidgetID> = []
        for saved in state.records.sorted(by: { $0.widget < $1.widget }) {
            let id = saved.widget
            guard widgets[id] != nil, let definition = definitions[id.kind], !restored.contains(id) else {
                if widgets[id] == nil {
                    effects.append(.persist(.deleteWidget(id)))
                    effects.append(.log(.droppedRecord(id)))
                }
                continue
            }
            restored.insert(id)
            var w = saved
            if definition.budget.limit == nil { w.ledger.removeAll() }
            w.ledger.sort()
            Self.prune(&w.ledger, window: definition.window, at: now)
            let interrupted = state.providersWaiting.contains(id) ? nil : w.inFlight
            let interruptedSince = w.inFlightSince ?? now
            if interrupted != nil {
                w.inFlight = nil
                w.inFlightSince = nil
            }
            if w.queued != nil, w.inFlight == nil {
                switch releaseInstant(&w, definition, at: now) {
                case .none: w.release = now
                case let .some(release): w.release = release
                }
            }
            widgets[id] = w
            changed(id)
            publishCurrent(id, at: now, force: true, into: &effects)
            if let ask = interrupted {
                tally(id, at: now) { $0.failed += 1 }
                effects.append(.log(.interrupted(id, since: interruptedSince)))
                if ask.demandsFreshness {
                    startStale(id, .providerInterrupted, at: min(interruptedSince, now), into: &effects)
                }
                // Asked again now, with whatever waited behind it.
                widgets[id]?.queued = w.queued.map { $0.merging(ask) } ?? ask
                resumeQueued(id, at: now, into: &effects)
            } else if let due = w.policyDue, due < now, (w.policyReason ?? .policyAtEnd).demandsFreshness {
                startStale(id, .refreshdDown, at: due, into: &effects)
            }
        }
        // A shared budget's releases need every member's ledger, all restored only now.
        for id in order where restored.contains(id) && definitions[id.kind]?.budgetGroup != nil {
            guard var w = widgets[id], w.queued != nil, w.inFlight == nil, let definition = definitions[id.kind] else { continue }
            switch releaseInstant(&w, definition, at: now) {
            case .none: w.release = now
            case let .some(release): w.release = release
            }
            widgets[id] = w
        }
        // Stale time up to now goes into its days while the restored rows are at hand (past
        // days' rows are not kept after this event, and must not be written afresh later).
        for id in order where widgets[id]?.stale != nil { accountStale(id, until: now) }
        for id in order where !restored.contains(id) {
            request(id, .added, at: now, into: &effects)
        }
    }
}
