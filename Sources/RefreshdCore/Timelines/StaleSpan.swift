/// One stretch of time a widget was stale, and why it started. Open while `end` is nil.
public struct StaleSpan: Sendable, Hashable, Codable {
    public var start: Instant
    public var end: Instant?
    public var reason: StaleReason
    /// The failure's own words, for provider failures (`exit 3`, `malformed JSON at line 1`).
    public var detail: String?

    public init(start: Instant, end: Instant? = nil, reason: StaleReason, detail: String? = nil) {
        self.start = start
        self.end = end
        self.reason = reason
        self.detail = detail
    }
}
