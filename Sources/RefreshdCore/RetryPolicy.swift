/// What to do after a run fails, expires, crashes or is interrupted: try again after a delay.
///
/// Like WorkManager's backoff: `exponential` doubles the delay each attempt
/// (initial, 2x, 4x, ...), `linear` adds it (initial, 2x, 3x, ...), both capped at `maximum`.
/// After `limit` consecutive failed attempts the job waits for its regular next request.
public struct RetryPolicy: Sendable, Hashable {
    /// How the delay grows from one attempt to the next.
    public enum Backoff: String, Sendable, Hashable, CaseIterable {
        /// initial, 2x, 4x, ... the delay doubles each attempt.
        case exponential
        /// initial, 2x, 3x, ... the delay grows by `initial` each attempt.
        case linear
    }

    /// How the delay grows between attempts.
    public var backoff: Backoff
    /// The delay before the first retry.
    public var initial: Duration
    /// The longest delay, whatever the attempt.
    public var maximum: Duration
    /// Consecutive failed attempts retried before the job waits for its regular next request.
    public var limit: Int

    /// A policy with WorkManager-like defaults: exponential from 30 s, at most 5 h, 5 attempts.
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
