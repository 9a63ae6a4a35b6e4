/// One stretch of time a widget was stale, and why it started. Open while `end` is nil.
package struct StaleSpan: Sendable, Hashable, Codable {
    package var start: Instant
    package var end: Instant?
    package var reason: StaleReason
    /// The failure's own words, for provider failures (`exit 3`, `malformed JSON at line 1`).
    package var detail: String?

    package init(start: Instant, end: Instant? = nil, reason: StaleReason, detail: String? = nil) {
        self.start = start
        self.end = end
        self.reason = reason
        self.detail = detail
    }
}
