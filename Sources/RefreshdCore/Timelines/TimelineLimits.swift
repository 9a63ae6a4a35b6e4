/// Bounds on what a provider may return, so one bad provider cannot bloat the store, the shared
/// container or the wake-up timer. WidgetKit wants light content (an identifier, not an image)
/// and timelines of a few dozen entries; very long ones are reported to stop updating.
package struct TimelineLimits: Sendable, Hashable {
    package var maxEntries: Int
    /// UTF-8 bytes of one entry's content.
    package var maxContentBytes: Int

    package init(maxEntries: Int = 500, maxContentBytes: Int = 4096) {
        self.maxEntries = maxEntries
        self.maxContentBytes = maxContentBytes
    }

    /// The timeline if it is within the limits, or the first thing wrong with it.
    package func check(_ timeline: Timeline) -> Result<Timeline, TimelineError> {
        if timeline.entries.count > maxEntries {
            return .failure(.tooManyEntries(count: timeline.entries.count, limit: maxEntries))
        }
        for (index, entry) in timeline.entries.enumerated() {
            let bytes = entry.content.utf8.count
            if bytes == 0 { return .failure(.emptyContent(index: index)) }
            if bytes > maxContentBytes {
                return .failure(.entryTooLarge(index: index, bytes: bytes, limit: maxContentBytes))
            }
            if let relevance = entry.relevance, !relevance.isFinite {
                return .failure(.relevanceNotFinite(index: index))
            }
            if let duration = entry.duration, duration < .zero {
                return .failure(.negativeDuration(index: index))
            }
        }
        return .success(timeline)
    }
}
