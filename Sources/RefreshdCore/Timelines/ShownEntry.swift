/// The entry a widget family shows now, and since when.
package struct ShownEntry: Sendable, Hashable, Codable {
    package var entry: TimelineEntry
    /// When it was published.
    package var since: Instant
    /// Its index in the widget's current timeline; nil when it is the last entry of an earlier
    /// timeline, kept on screen because the new timeline's first entry is still in the future.
    package var index: Int?

    package init(entry: TimelineEntry, since: Instant, index: Int?) {
        self.entry = entry
        self.since = since
        self.index = index
    }
}
