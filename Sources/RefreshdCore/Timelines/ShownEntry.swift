/// The entry a widget family shows now, and since when.
public struct ShownEntry: Sendable, Hashable, Codable {
    public var entry: TimelineEntry
    /// When it was published.
    public var since: Instant
    /// Its index in the widget's current timeline; nil when it is the last entry of an earlier
    /// timeline, kept on screen because the new timeline's first entry is still in the future.
    public var index: Int?

    public init(entry: TimelineEntry, since: Instant, index: Int?) {
        self.entry = entry
        self.since = since
        self.index = index
    }
}
