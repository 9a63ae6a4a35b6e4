/// What the core did about instances, as log lines.
package enum InstanceLog: Sendable, Hashable, CustomStringConvertible {
    case added(identifier: String)
    /// Added again: its request, backoff and retry streak kept (`updated`: with new values).
    case kept(identifier: String, updated: Bool)
    /// Removed: its request cancelled (`cancelled`), its run in flight left to finish (`running`).
    case removed(identifier: String, cancelled: Bool, running: Int64?)
    case refused(InstanceError)
    /// A run's results line about instances that was not applied (malformed, or its run failed).
    case ignoredLine(owner: String, reason: String)
    /// An instance's widget not declared: its kind is a job's widget's (a restore or a
    /// redeclared template found the job there first; an add is refused instead).
    case widgetTaken(identifier: String, kind: String, owner: String)
    /// More instance changes in one event than a person reads (`batchLines`), told in one line
    /// a template: counts, and the first and last key in the order applied (`foldBatch`).
    case batch(template: String, added: Int, kept: Int, removed: Int, first: String, last: String)

    package var description: String {
        switch self {
        case let .added(id): "instance added \(id)"
        case let .kept(id, updated):
            "instance \(id) already exists: its request, backoff and retry streak kept\(updated ? "; its parameter values updated" : "")"
        case let .removed(id, cancelled, running):
            "instance removed \(id): "
                + (cancelled ? "its pending request cancelled" : "nothing pending")
                + (running.map { ", its run \($0) left to finish (nothing follows it)" } ?? "")
        case let .refused(error): "instance refused: \(error)"
        case let .ignoredLine(owner, reason): "\(owner): instances line ignored: \(reason)"
        case let .batch(template, added, kept, removed, first, last):
            "instances of \(template): \(added) added, \(kept) kept, \(removed) removed in one batch (keys \(EchoText.quoted(first, limit: 80))"
                + (first == last ? "" : " to \(EchoText.quoted(last, limit: 80))") + "; one line for the batch, not one an instance)"
        case let .widgetTaken(id, kind, owner):
            "instance \(id): its widget \(EchoText.quoted(kind, limit: 80)) is not declared: that kind is already \(owner)'s "
                + "(two widgets cannot share a kind); give \(owner) another widget kind, or remove the instance"
        }
    }
}

extension InstanceLog {
    /// The most instance lines one event logs one by one; a batch above it (a `ctl instance add
    /// --keys-from` request of 4,000 keys, a sync run's list, another shard's command) is told
    /// in one line a template: 1,000,000 instances added were 2,000,000 lines (213 MB of log).
    package static let batchLines = 100

    /// Folds the lines of an event's instance changes (`effects[start...]`: added, kept,
    /// removed, and the added ones' `submitted` and the removed ones' `cancelled`) into one
    /// `batch` line a template, when there are more than `batchLines` of them; refusals and
    /// every other effect stay as they are, in order.
    package static func foldBatch(_ effects: inout [SchedulerEffect], from start: Int) {
        var changes = 0
        for index in start..<effects.count {
            guard case let .log(.instance(log)) = effects[index] else { continue }
            switch log {
            case .added, .kept, .removed: changes += 1
            default: break
            }
        }
        guard changes > batchLines else { return }
        struct Tally { var added = 0, kept = 0, removed = 0, first = "", last = "" }
        var tallies: [String: Tally] = [:]
        var order: [String] = []
        func count(_ identifier: String, _ change: (inout Tally) -> Void) {
            guard let (template, key) = InstanceName.split(identifier) else { return }
            if tallies[template] == nil {
                order.append(template)
                tallies[template] = Tally(first: key)
            }
            change(&tallies[template]!)
            tallies[template]!.last = key
        }
        var kept = start
        for index in start..<effects.count {
            let effect = effects[index]
            switch effect {
            case let .log(.instance(.added(id))): count(id) { $0.added += 1 }; continue
            case let .log(.instance(.kept(id, _))): count(id) { $0.kept += 1 }; continue
            case let .log(.instance(.removed(id, _, _))): count(id) { $0.removed += 1 }; continue
            case let .log(.submitted(request, _)) where InstanceName.split(request.identifier) != nil: continue
            case let .log(.cancelled(id)) where InstanceName.split(id) != nil: continue
            default: break
            }
            effects[kept] = effect
            kept += 1
        }
        effects.removeSubrange(kept...)
        for template in order {
            let t = tallies[template]!
            effects.append(.log(.instance(.batch(template: template, added: t.added, kept: t.kept, removed: t.removed,
                                                 first: t.first, last: t.last))))
        }
    }
}
