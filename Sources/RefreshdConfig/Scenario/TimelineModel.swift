import RefreshdCore

/// What a modelled timeline provider returns (`simulate: {timeline: ...}` of a `kind: timeline`
/// job): its entries, its reload policy and whether it fetches upstream. The simulated run writes
/// it as the real results line, which the real runtime parses and checks.
///
/// Without one a provider returns one entry dated now with `atEnd` (the design that burns its
/// budget: each reload is due again at once).
package struct TimelineModel: Sendable, Hashable {
    /// Where the entries fall, relative to the provider's run.
    package enum Entries: Sendable, Hashable {
        /// One entry dated at the run.
        case now
        /// Times of day (minutes after local midnight): the slot current at the run, dated at the
        /// run, then every occurrence of each time in the next 24 hours (a full day of entries).
        case timesOfDay([Int])
        /// `count` entries, the first `every` after the run, then every `every`.
        case every(Duration, count: Int)
    }

    /// When the timeline asks to be reloaded.
    package enum Policy: Sendable, Hashable {
        case atEnd
        /// At the start of the next day (local midnight).
        case afterTomorrow
        /// This long after the run.
        case after(Duration)
        case never
    }

    package var entries: Entries
    package var policy: Policy
    /// Whether the provider fetches from upstream (shared across families within the widget's
    /// `shared-fetch` window, as the per-kind cache would).
    package var upstreamFetch: Bool

    package init(entries: Entries = .now, policy: Policy = .atEnd, upstreamFetch: Bool = true) {
        self.entries = entries
        self.policy = policy
        self.upstreamFetch = upstreamFetch
    }

    /// A provider without a model: one entry now, `atEnd`.
    package static let oneEntryAtEnd = TimelineModel()
}
