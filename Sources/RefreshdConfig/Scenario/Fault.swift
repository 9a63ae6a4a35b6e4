import RefreshdCore

/// A failure injected on purpose, at an instant, over a span, or on a job's Nth run.
package enum Fault: Sendable, Hashable {
    /// refreshd is down (stopped gracefully) for a span, then starts again: missed runs.
    case down(TimeSpan)
    /// refreshd is killed (kill -9) and started again after `restartAfter` from what its store
    /// had committed.
    case kill(at: SimulationTime, restartAfter: Duration)
    /// The job's Nth run (1-based) runs past its allowance and is expired.
    case expireRun(job: String, run: Int)
    /// The job's Nth run crashes (killed by a signal refreshd did not send).
    case crashRun(job: String, run: Int)
    /// The wall clock is stepped (negative: back).
    case clockStep(at: SimulationTime, by: Duration)
    /// The machine sleeps for a span: no timer fires; the wall clock jumps at resume. refreshd
    /// hears of it at resume (Linux 5.14 and later cancel its timerfd), or with `seenAtWakeUp`
    /// (older kernels) only at its next wake-up, which comes late by the span (it waits on the
    /// monotonic clock) and finds the clocks apart by more than the tolerance.
    case suspend(TimeSpan, seenAtWakeUp: Bool = false)
    /// Every commit fails during the span (disk full): refreshd stops, and is started again
    /// when the span ends.
    case storeFull(TimeSpan)
    /// Mains power is lost for a span.
    case powerLoss(TimeSpan)
    /// The network is down for a span.
    case networkLoss(TimeSpan)
    /// A timeline job's provider returns garbage (a malformed timeline) on its Nth provider run
    /// (counted over all its families), or on every run in a span.
    case providerGarbage(job: String, run: Int?, span: TimeSpan?)
    /// A timeline job's Nth provider run overruns its allowance and is expired.
    case providerExpires(job: String, run: Int)
    /// Every widget's reload budget is empty for a span (no counted reload may happen).
    case budgetEmpty(TimeSpan)
    /// The job's Nth run stops updating its activity `after` into the run (and never ends it).
    case activitySilent(job: String, run: Int, after: Duration)
    /// Someone taps an interactive widget button `count` times, a second apart: each a reload
    /// from a widget intent (exempt from the budget and the minimum interval).
    case widgetIntents(at: SimulationTime, count: Int)
    /// The device is in Low Power Mode for a span: counted widget reloads are held until it ends.
    case lowPower(TimeSpan)
    /// Every failure-notification receiver (webhook or command) fails for a span: attempts are
    /// retried with backoff, or given up.
    case notifierDown(TimeSpan)
    /// An operator pauses a job or template (`refreshd ctl pause`) at an instant and resumes it
    /// `for` later (nil: it stays paused to the end).
    case pause(job: String, at: SimulationTime, for: Duration?)
    /// An operator's (or the dashboard's) order at an instant: a submit, a cancel, a launch or
    /// expiration now, a widget reload (`OperatorOrder`); lost while refreshd is down, like one
    /// sent to its socket. `simulate --replay` gives back the recorded ones.
    case order(OperatorOrder, at: SimulationTime)

    /// A short label for reports: `kill`, `down`, `clock-step`...
    package var label: String {
        switch self {
        case .down: "down"
        case .kill: "kill"
        case .expireRun: "expire-run"
        case .crashRun: "crash-run"
        case .clockStep: "clock-step"
        case .suspend: "suspend"
        case .storeFull: "store-full"
        case .powerLoss: "power-loss"
        case .networkLoss: "network-loss"
        case .providerGarbage: "provider-garbage"
        case .providerExpires: "provider-expires"
        case .budgetEmpty: "budget-empty"
        case .activitySilent: "activity-silent"
        case .widgetIntents: "widget-intents"
        case .lowPower: "low-power"
        case .notifierDown: "notifier-down"
        case .pause: "pause"
        case .order: "operator"
        }
    }
}
