import Foundation
import RefreshdCore

/// The operator's commands on one runtime's state, answered by ONE function (issue 32): the
/// control socket and the dashboard of one machine call it (`ControlServer.perform`), and so does
/// a cluster node's shard leader when it applies a command queued for its shard
/// (`ClusterNode.applyControlRequest`). What each command does is the runtime's operator entry
/// points; what it says back is written here once.
extension RefreshRuntime {
    /// The reply to `command` carried out on this runtime, or nil for a command that is not
    /// about one runtime's state (`hello`, `status`, `why`, `subscribe`, `metrics`, `run-stats`:
    /// the server's).
    /// Throws the refusals the socket turns into error replies (`ControlFailure(of:)`).
    package func performOperatorCommand(_ command: ControlCommandName, _ request: ControlRequest) throws -> ControlReply? {
        var reply = ControlReply(id: request.id, now: now)
        switch command {
        case .hello, .status, .why, .subscribe, .metrics, .runStats:
            return nil
        case .pending:
            reply.pending = snapshot().pending
        case .submit:
            let id = try Self.identifier(request)
            try submitForOperator(id, earliest: request.earliest)
            reply.pending = snapshot().pending.filter { $0.identifier == id }
            reply.message = "submitted \(id) earliest \(reply.pending?.first?.earliest.description ?? "now")"
        case .cancel:
            let id = try Self.identifier(request)
            guard definitions[id] != nil else { throw undeclared(id) }
            let had = pending(id) != nil
            cancel(id)
            reply.message = had ? "cancelled \(id)" : "\(id) had no pending request; nothing to cancel"
        case .cancelAll:
            let count = snapshot().pending.count
            cancelAll()
            reply.message = "cancelled \(count) pending request\(count == 1 ? "" : "s")"
        case .pause:
            let id = try Self.identifier(request)
            try pause(id)
            let waiting = snapshot().pending.filter { $0.identifier == id || InstanceName.split($0.identifier)?.template == id }.count
            reply.message = "paused \(id): nothing of it launches until refreshd ctl resume \(id)"
                + (waiting == 0 ? "" : "; \(waiting) pending request\(waiting == 1 ? "" : "s") kept")
        case .resume:
            let id = try Self.identifier(request)
            try resume(id)
            reply.snapshot = snapshot()
            let launched = reply.snapshot?.runs.filter { $0.identifier == id || InstanceName.split($0.identifier)?.template == id }.count ?? 0
            reply.message = "resumed \(id)" + (launched == 0 ? "" : "; \(launched) run\(launched == 1 ? "" : "s") in flight")
        case .simulateLaunch:
            let id = try Self.identifier(request)
            try launchNow(id)
            let run = snapshot().runs.first { $0.identifier == id }
            reply.snapshot = snapshot()
            reply.message = "launched \(id)" + (run.map { " run \($0.runID), deadline \($0.deadline)" } ?? "")
        case .simulateExpiration:
            let id = try Self.identifier(request)
            try expireNow(id)
            reply.snapshot = snapshot()
            let run = reply.snapshot?.runs.first { $0.identifier == id }
            reply.message = "delivered the expiration to \(id)" + (run.map { " run \($0.runID)" } ?? "")
        case .snapshot:
            reply.snapshot = snapshot()
            reply.timelines = timelineSnapshot()
            reply.activities = activitySnapshot()
        case .reload:
            try reloadWidgets(request, into: &reply)
        case .activity:
            try activity(request, into: &reply)
        case .stats:
            let counters = try savedMachineState()?.counters ?? []
            reply.stats = ReloadStats(counters: counters, days: request.days ?? 7, now: now)
                .folding(instanceWidgetTemplates())
        case .instanceAdd, .instanceRemove, .instanceList:
            try instance(command, request, into: &reply)
        }
        return reply
    }

    /// The records of a batch `instance-add` (`keys`, one set of `values`): refused whole, before
    /// anything is added, when a key is not one an instance may have.
    package static func instanceRecords(template: String, keys: [String], values: [String: String]?) throws -> [InstanceRecord] {
        try keys.map { key in
            if let problem = InstanceName.keyProblem(key) { throw InstanceError.badKey(template: template, key: key, problem: problem) }
            return InstanceRecord(template: template, key: key, values: values ?? [:])
        }
    }

    package static func identifier(_ request: ControlRequest) throws -> String {
        guard let id = request.identifier, !id.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"identifier\": the job's identifier")
        }
        return id
    }

    /// `reload`: one kind (`kind`) or every kind (`all`), explicit, or exempt as an app in the
    /// foreground (`foreground`). Over budget a reload is deferred, never dropped.
    func reloadWidgets(_ request: ControlRequest, into reply: inout ControlReply) throws {
        let reason: ReloadReason = request.foreground == true ? .appForeground : .explicitAPI
        let kinds = Set(timelineSnapshot().widgets.map(\.kind))
        if request.all == true {
            guard request.kind == nil else {
                throw ControlFailure(code: "bad-request", message: "\"reload\" takes \"kind\" or \"all\": true, not both")
            }
            reloadAllTimelines(reason: reason)
            reply.message = "asked every widget (\(kinds.count) kind\(kinds.count == 1 ? "" : "s")) for a reload (\(reason))"
        } else {
            guard let kind = request.kind, !kind.isEmpty else {
                throw ControlFailure(code: "bad-request", message: "\"reload\" needs \"kind\": a widget kind, or \"all\": true")
            }
            guard kinds.contains(kind) else {
                let known = kinds.sorted().joined(separator: ", ")
                throw ControlFailure(code: "unknown-kind", message: "no loaded job declares widget kind \"\(kind)\"; expected one of: \(known.isEmpty ? "(none)" : known)")
            }
            reloadTimelines(ofKind: kind, reason: reason)
            reply.message = "asked \(kind) for a reload (\(reason))"
        }
        reply.timelines = timelineSnapshot()
    }

    /// The namespace an `activity` request names (`"namespace"`; `default` without one), or the
    /// refusal of a request that is not an activity line: the cluster routes a start by it.
    package static func activityNamespace(_ request: ControlRequest) throws -> (text: String, namespace: String) {
        let expected = "expected \"activity\": a JSON object as text, like {\"activity\":\"start\",\"id\":\"pack\",\"type\":\"Download\",\"content\":{\"progress\":0.1}}"
        guard let text = request.activity,
              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw ControlFailure(code: "bad-request", message: expected)
        }
        guard let value = object["namespace"] else { return (text, "default") }
        guard let name = value as? String, !name.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"namespace\": expected a non-empty string")
        }
        return (text, name)
    }

    /// `activity`: a start, update or end, as a results-channel activity line; the machine's
    /// refusals come back as error replies with their codes.
    func activity(_ request: ControlRequest, into reply: inout ControlReply) throws {
        let (text, namespace) = try Self.activityNamespace(request)
        let now = now
        let touched: String
        switch ResultLine.parse(text, owner: ActivityRequest.operatorOwner, namespace: namespace, now: now) {
        case let .activity(.request(start)):
            try requestActivity(start)
            reply.message = "started activity \(start.id)"
            touched = start.id
        case let .activity(.update(update)):
            try updateActivity(update)
            reply.message = "updated activity \(update.id)"
            touched = update.id
        case let .activity(.end(id, content, policy, _)):
            try endActivity(id, content: content, policy: policy)
            reply.message = "ended activity \(id) (dismissal \(policy))"
            touched = id
        case let .badActivity(problem):
            throw ControlFailure(code: "bad-request", message: problem)
        default:
            throw ControlFailure(code: "bad-request", message: "expected \"activity\": a start, update or end line")
        }
        // Only what the request changed: every activity in every reply made 500 pipelined
        // starts cost 46 MB of replies.
        reply.activities = activitySnapshot(of: touched)
    }

    /// `instance-add`, `instance-remove`, `instance-list` (issue 23): the runtime decides, the
    /// reply names what was missing.
    func instance(_ command: ControlCommandName, _ request: ControlRequest, into reply: inout ControlReply) throws {
        guard let template = request.template, !template.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"template\": the identifier of a job file with template: true")
        }
        if command == .instanceList {
            guard let list = instances(of: template) else { throw InstanceError.unknownTemplate(template) }
            var start = 0
            if let after = request.after {
                guard let index = list.firstIndex(where: { $0.key == after }) else {
                    throw InstanceError.unknownInstance(template: template, key: after)
                }
                start = index + 1
            }
            let limit = request.limit ?? ControlRequest.Bounds.instances.upperBound
            let page = list[start...].prefix(limit)
            reply.instances = Array(page)
            if start + page.count < list.count { reply.nextAfter = page.last?.key }
            reply.message = "\(template): \(list.count) instance\(list.count == 1 ? "" : "s")"
                + (page.count < list.count ? " (\(page.count) shown from number \(start + 1))" : "")
            return
        }
        if command == .instanceAdd, let keys = request.keys {
            let records = try Self.instanceRecords(template: template, keys: keys, values: request.values)
            let existed = records.reduce(0) { $0 + (instance($1.identifier) != nil ? 1 : 0) }
            let refused = addInstances(records)
            if let first = refused.first {
                throw ControlFailure(code: ControlFailure(of: first.error).code, message: "\(refused.count) of \(records.count) instances of \(template) refused "
                    + "(the others were added): first \(first.record.identifier): \(ControlFailure(of: first.error).message)")
            }
            reply.message = "added \(records.count - existed) instance\(records.count - existed == 1 ? "" : "s") of \(template)"
                + (existed == 0 ? "" : ", kept \(existed) that already existed (their requests, backoff and retry streaks unchanged)")
            return
        }
        guard let key = request.key else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"key\": the instance's key (\(InstanceName.keyExpectation))")
        }
        let identifier = InstanceName.identifier(template: template, key: key)
        if command == .instanceAdd {
            let existed = instance(identifier) != nil
            try addInstance(template: template, key: key, values: request.values ?? [:])
            reply.instances = instance(identifier).map { [$0] }
            reply.message = existed ? "kept \(identifier): it already exists (its request, backoff and retry streak are unchanged)"
                : "added \(identifier)"
        } else {
            let pending = pending(identifier) != nil
            try removeInstance(template: template, key: key)
            reply.message = "removed \(identifier)" + (pending ? ": its pending request cancelled" : "")
        }
    }
}

extension ControlFailure {
    /// Any refusal a command throws as the error reply the socket sends: the core's, the
    /// scheduler's, the activity machine's and the instances' keep their codes; anything else is
    /// `internal`.
    package init(of error: any Error) {
        switch error {
        case let failure as ControlFailure: self = failure
        case let refusal as ControlRefusal: self.init(code: refusal.code, message: refusal.description)
        case let error as ActivityError: self.init(error)
        case let error as InstanceError: self.init(code: error.code, message: error.description)
        case let error as SchedulerError:
            let code = switch error {
            case .tooManyPendingTaskRequests: "too-many-pending"
            case .notPermitted: "not-permitted"
            case .unavailable: "unavailable"
            case .notSaved: "not-saved"
            }
            self.init(code: code, message: error.description)
        default: self.init(code: "internal", message: "\(error)")
        }
    }
}
