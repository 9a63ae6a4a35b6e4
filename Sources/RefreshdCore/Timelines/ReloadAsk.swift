/// A reload that was asked for and has not finished: running, or waiting for the provider run in
/// flight to end, or deferred until the budget frees a slot.
///
/// Requests that arrive while one waits are coalesced into it: it remembers the first reason
/// and instant, and whether any of them was exempt (then the one reload is exempt) or demanded
/// freshness (then its failure makes the widget stale).
package struct ReloadAsk: Sendable, Hashable, Codable {
    /// The first request's reason.
    package var reason: ReloadReason
    /// When the first request was made.
    package var requested: Instant
    /// Any coalesced request was exempt: the reload does not count and is not deferred.
    package var exempt: Bool
    /// Any coalesced request came from the policy or an explicit reload.
    package var demandsFreshness: Bool
    /// How many requests it stands for.
    package var requests: Int

    package init(reason: ReloadReason, requested: Instant) {
        self.reason = reason
        self.requested = requested
        self.exempt = reason.isExempt
        self.demandsFreshness = reason.demandsFreshness
        self.requests = 1
    }

    /// This ask with one more request coalesced into it.
    package func merging(_ other: ReloadReason) -> ReloadAsk {
        var merged = self
        merged.exempt = merged.exempt || other.isExempt
        merged.demandsFreshness = merged.demandsFreshness || other.demandsFreshness
        merged.requests += 1
        return merged
    }

    /// Two asks as one (the earlier one's reason and instant).
    package func merging(_ other: ReloadAsk) -> ReloadAsk {
        var merged = requested <= other.requested ? self : other
        merged.exempt = exempt || other.exempt
        merged.demandsFreshness = demandsFreshness || other.demandsFreshness
        merged.requests = requests + other.requests
        return merged
    }
}
