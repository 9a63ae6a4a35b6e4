/// What to do after a run fails, expires, crashes or is interrupted: try again after a delay.
///
/// Like WorkManager's backoff: `exponential` doubles the delay each attempt
/// (initial, 2x, 4x, ...), `linear` adds it (initial, 2x, 3x, ...), both capped at `maximum`.
/// After `limit` consecutive failed attempts the job waits for its regular next request.
public struct RetryPolicy: Sendable, Hashable {
    public enum Backoff: String, Sendable, Hashable, CaseIterable {
        case exponential
        case linear
    }

    public var backoff: Backoff
    public var initial: Duration
    public var maximum: Duration
    public var limit: Int

    public init(backoff: Backoff = .exponential, initial: Duration = .seconds(30),
                maximum: Duration = .seconds(5 * 3600), limit: Int = 5) {
        self.backoff = backoff
        self.initial = initial
        self.maximum = maximum
        self.limit = limit
    }

    /// The delay before retry number `attempt` (1-based), or nil when the limit is reached.
    public func delay(forAttempt attempt: Int) -> Duration? {
        guard attempt >= 1, attempt <= limit else { return nil }
        let initialMs = initial.wholeMilliseconds
        let maxMs = maximum.wholeMilliseconds
        var ms: Int64
        switch backoff {
        case .linear:
            let (product, overflow) = initialMs.multipliedReportingOverflow(by: Int64(attempt))
            ms = overflow ? maxMs : product
        case .exponential:
            let shift = min(attempt - 1, 62)
            let (product, overflow) = initialMs.multipliedReportingOverflow(by: Int64(1) << shift)
            ms = overflow ? maxMs : product
        }
        return .milliseconds(min(ms, maxMs))
    }
}
