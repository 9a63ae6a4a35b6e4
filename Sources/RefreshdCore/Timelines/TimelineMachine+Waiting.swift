extension TimelineMachine {
    /// A provider call that found nothing to show yet (`ProviderResult.waiting`): a fresh start
    /// before the first staging run. Not a failure: no stale span opens, no failure is counted,
    /// no retry is set and the last good timeline (if any) stays; one info line says so. The
    /// call itself was a provider run and stays counted against the budget, but it starts no
    /// minimum reload interval: it showed nothing, and the reload that brings the first entries
    /// (the staging run's, seconds later on a fresh start) must not wait five minutes for it.
    mutating func waited(_ id: WidgetID, _ w: WidgetRecord, reason: String, into effects: inout [TimelineEffect]) {
        var w = w
        w.lastReload = nil
        widgets[id] = w
        effects.append(.log(.waiting(id, reason: reason)))
    }
}
