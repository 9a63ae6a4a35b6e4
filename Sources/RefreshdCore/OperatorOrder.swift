/// An order from outside the job files that changes what runs (issue 34): an operator's
/// `refreshd ctl submit`, `cancel`, `cancel-all`, `simulate-launch`, `simulate-expiration` or
/// `reload KIND` (or the dashboard's, or an embedding app's cancel or widget reload).
///
/// The machines record each one they take (`WorldEvent.What.order`) in the order's own
/// transaction, so `simulate --replay` gives it back to the simulator as a fault at its instant
/// (`Fault.order`), and the runs an operator caused are replayed too.
package enum OperatorOrder: Sendable, Hashable {
    /// The job's own request, due at `earliest` (`RuntimeMachine.operatorRequest`; nil: at
    /// once, as a scenario's `operator` fault writes it; a recorded one has its date).
    case submit(String, earliest: Instant?)
    /// Its pending request cancelled.
    case cancel(String)
    /// Every pending request (of one namespace) cancelled.
    case cancelAll(namespace: String?)
    /// Its pending request launched now (`SchedulerCore.launchNow`).
    case launchNow(String)
    /// Its run's expiration delivered now (`SchedulerCore.expireNow`).
    case expireNow(String)
    /// A widget kind's families (nil: every widget) asked for a new timeline.
    case reloadWidgets(kind: String?, reason: ReloadReason)

    /// The record's event name, the `ctl` command's: `submit`, `cancel`, `cancel-all`,
    /// `simulate-launch`, `simulate-expiration`, `widget-reload`.
    var name: String {
        switch self {
        case .submit: "submit"
        case .cancel: "cancel"
        case .cancelAll: "cancel-all"
        case .launchNow: "simulate-launch"
        case .expireNow: "simulate-expiration"
        case .reloadWidgets: "widget-reload"
        }
    }

    /// What it names: a job, a namespace or a widget kind (nil: all).
    var subject: String? {
        switch self {
        case let .submit(job, _), let .cancel(job), let .launchNow(job), let .expireNow(job): job
        case let .cancelAll(namespace): namespace
        case let .reloadWidgets(kind, _): kind
        }
    }

    /// `ctl submit app.feed (earliest 2026-12-05T10:00:00.000Z)`, given at `at` (an earliest
    /// date that is `at` goes unsaid): the replay's words for its faults.
    package func text(at: Instant) -> String {
        switch self {
        case let .submit(job, earliest): "ctl submit \(job)" + (earliest.map { $0 == at ? "" : " (earliest \($0.iso8601))" } ?? "")
        case let .cancel(job): "ctl cancel \(job)"
        case let .cancelAll(namespace): "ctl cancel-all" + (namespace.map { " (namespace \($0))" } ?? "")
        case let .launchNow(job): "ctl simulate-launch \(job)"
        case let .expireNow(job): "ctl simulate-expiration \(job)"
        case let .reloadWidgets(kind, reason): "reload \(kind ?? "every widget") (\(reason))"
        }
    }
}
