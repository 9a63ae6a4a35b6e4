/// A high-priority update the budget held back: the latest one (by timestamp) of those that
/// came while the budget was spent. It is applied at `release`, when the oldest use in the
/// rolling hour leaves the window, unless a newer update (of either priority) supersedes it or
/// the activity ends first.
package struct HeldActivityUpdate: Sendable, Hashable, Codable {
    package var content: String
    package var staleDate: Instant?
    package var relevance: Double?
    package var timestamp: Instant
    /// When the first of the coalesced updates was held.
    package var heldSince: Instant
    /// How many held updates were folded into this one (1 when one was held).
    package var coalesced: Int
    /// When the budget returns and this update is applied.
    package var release: Instant

    package init(content: String, staleDate: Instant?, relevance: Double?, timestamp: Instant,
                heldSince: Instant, coalesced: Int, release: Instant) {
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.timestamp = timestamp
        self.heldSince = heldSince
        self.coalesced = coalesced
        self.release = release
    }
}
