/// An order from outside the job files that changes what runs (issue 34): an operator's
/// `refreshd ctl submit`, `cancel`, `cancel-all`, `simulate-launch`, `simulate-expiration`,
/// `reload KIND`, `activity LINE` or `instance add|remove` (or the dashboard's, or an embedding
/// app's cancel, widget reload, activity or instance).
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
    /// A live activity started, updated or ended from outside a run (`ctl activity`, the
    /// dashboard's end, an embedding app): `.request`, `.update` or `.end` only.
    case activity(ActivityEvent)
    /// Instances of one template added with one set of values (`ctl instance add T K...`,
    /// the dashboard's add, an embedding app's batch): one order a batch, not a record each.
    case addInstances(template: String, keys: [String], values: [String: String])
    /// An instance removed (`ctl instance remove`).
    case removeInstance(template: String, key: String)

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
        case .activity: "ctl-activity"
        case .addInstances: "instance-add"
        case .removeInstance: "instance-remove"
        }
    }

    /// What it names: a job, a namespace or a widget kind (nil: all).
    var subject: String? {
        switch self {
        case let .submit(job, _), let .cancel(job), let .launchNow(job), let .expireNow(job): job
        case let .cancelAll(namespace): namespace
        case let .reloadWidgets(kind, _): kind
        case let .activity(event): event.activityID
        case let .addInstances(template, keys, _): InstanceName.identifier(template: template, key: keys.first ?? "")
        case let .removeInstance(template, key): InstanceName.identifier(template: template, key: key)
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
        case let .activity(event):
            "ctl activity \(event.kind == .request ? "start" : event.kind.rawValue) \(event.activityID ?? "")"
        case let .addInstances(template, keys, _):
            "ctl instance add \(template) " + keys.prefix(5).joined(separator: " ") + (keys.count > 5 ? " and \(keys.count - 5) more" : "")
        case let .removeInstance(template, key): "ctl instance remove \(template) \(key)"
        }
    }
}

extension ActivityEvent {
    /// The activity a start, update or end names (nil for the machine's own events).
    package var activityID: String? {
        switch self {
        case let .request(request): request.id
        case let .update(update): update.id
        case let .end(id, _, _, _): id
        default: nil
        }
    }
}
