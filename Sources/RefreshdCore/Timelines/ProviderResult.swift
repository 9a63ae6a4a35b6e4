/// How one provider call for one widget family ended, as the runtime reports it.
package enum ProviderResult: Sendable, Hashable {
    /// A timeline the runtime parsed and checked. `upstreamFetch`: the provider fetched from
    /// upstream for it (false when it used the kind's shared fetch), counted apart from calls.
    case timeline(Timeline, upstreamFetch: Bool)
    /// A failed reload: the provider failed, wrote malformed output, or `expired` (ran out of its
    /// allowance). The widget keeps its last good timeline.
    case failed(reason: String, expired: Bool)
    /// The provider has nothing to show yet (its source was never filled: no playlist staged
    /// yet). Not a failure: no stale span, no failure counted, no retry; the widget keeps what it
    /// shows, and the reload from whoever fills the source brings the first entries.
    case waiting(reason: String)
}
