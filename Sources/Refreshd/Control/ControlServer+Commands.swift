import Foundation
import Glibc
import RefreshdCore
import RefreshdRuntime

/// The control protocol's commands, carried out on the loop thread against the live runtime.
extension ControlServer {
    func handle(_ line: [UInt8], from connection: ControlConnection) {
        let request: ControlRequest
        do {
            request = try decoder.decode(ControlRequest.self, from: Data(line))
        } catch let DecodingError.keyNotFound(key, _) {
            return reply(.failure(id: Self.requestID(line), ControlFailure(
                code: "bad-request", message: "the request has no \"\(key.stringValue)\"; expected {\"v\":1,\"command\":\"...\"}")), to: connection)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return reply(.failure(id: Self.requestID(line), ControlFailure(
                code: "bad-request", message: "\"\(field)\" has the wrong type: \(context.debugDescription)")), to: connection)
        } catch {
            return reply(.failure(id: nil, ControlFailure(
                code: "bad-json", message: "the line is not a JSON object; expected one object per line such as {\"v\":1,\"command\":\"pending\"}")), to: connection)
        }
        let id = request.id
        guard request.v == ControlRequest.version else {
            return reply(.failure(id: id, ControlFailure(
                code: "unsupported-version", message: "protocol version \(request.v) is not spoken here; expected \"v\":\(ControlRequest.version)")), to: connection)
        }
        guard let command = ControlCommandName(rawValue: request.command) else {
            let known = ControlCommandName.allCases.filter(\.isSupported).map(\.rawValue).joined(separator: ", ")
            return reply(.failure(id: id, ControlFailure(
                code: "unknown-command", message: "unknown command \"\(request.command)\"; expected one of \(known)")), to: connection)
        }
        do {
            reply(try perform(command, request, connection), to: connection)
        } catch is Handled {
            return
        } catch let failure as ControlFailure {
            reply(.failure(id: id, failure), to: connection)
        } catch let refusal as ControlRefusal {
            reply(.failure(id: id, ControlFailure(code: refusal.code, message: refusal.description)), to: connection)
        } catch let error as ActivityError {
            reply(.failure(id: id, ControlFailure(error)), to: connection)
        } catch let error as SchedulerError {
            reply(.failure(id: id, Self.failure(error)), to: connection)
        } catch {
            reply(.failure(id: id, ControlFailure(code: "internal", message: "\(error)")), to: connection)
        }
    }

    /// The `id` of a request that did not decode, if it has a readable one.
    static func requestID(_ line: [UInt8]) -> Int? {
        (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["id"] as? Int
    }

    static func failure(_ error: SchedulerError) -> ControlFailure {
        let code = switch error {
        case .tooManyPendingTaskRequests: "too-many-pending"
        case .notPermitted: "not-permitted"
        case .unavailable: "unavailable"
        case .notSaved: "not-saved"
        }
        return ControlFailure(code: code, message: error.description)
    }

    func identifier(_ request: ControlRequest) throws -> String {
        guard let id = request.identifier, !id.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"identifier\": the job's identifier")
        }
        return id
    }

    func perform(_ command: ControlCommandName, _ request: ControlRequest,
                 _ connection: ControlConnection) throws -> ControlReply {
        var reply = ControlReply(id: request.id, now: runtime.now)
        switch command {
        case .hello:
            reply.hello = ControlHello(protocolVersion: ControlRequest.version, pid: getpid(),
                                       stateDirectory: stateDirectory,
                                       commands: ControlCommandName.allCases.filter(\.isSupported).map(\.rawValue),
                                       maxConcurrentRuns: runtime.options.configuration.maxConcurrentRuns)
        case .pending:
            reply.pending = runtime.snapshot().pending
        case .submit:
            let id = try identifier(request)
            guard let definition = runtime.definitions[id] else {
                throw ControlRefusal.notDeclared(identifier: id)
            }
            try runtime.submit(TaskRequest(identifier: id, kind: definition.kind, earliestBeginDate: request.earliest,
                                           requiresExternalPower: definition.requiresExternalPower,
                                           requiresNetworkConnectivity: definition.requiresNetworkConnectivity))
            reply.pending = runtime.snapshot().pending.filter { $0.identifier == id }
            reply.message = "submitted \(id) earliest \(reply.pending?.first?.earliest.description ?? "now")"
        case .cancel:
            let id = try identifier(request)
            guard runtime.definitions[id] != nil else { throw ControlRefusal.notDeclared(identifier: id) }
            let had = runtime.pending(id) != nil
            runtime.cancel(id)
            reply.message = had ? "cancelled \(id)" : "\(id) had no pending request; nothing to cancel"
        case .cancelAll:
            let count = runtime.snapshot().pending.count
            runtime.cancelAll()
            reply.message = "cancelled \(count) pending request\(count == 1 ? "" : "s")"
        case .simulateLaunch:
            let id = try identifier(request)
            try runtime.launchNow(id)
            let run = runtime.snapshot().runs.first { $0.identifier == id }
            reply.snapshot = runtime.snapshot()
            reply.message = "launched \(id)" + (run.map { " run \($0.runID), deadline \($0.deadline)" } ?? "")
        case .simulateExpiration:
            let id = try identifier(request)
            try runtime.expireNow(id)
            reply.snapshot = runtime.snapshot()
            let run = reply.snapshot?.runs.first { $0.identifier == id }
            reply.message = "delivered the expiration to \(id)" + (run.map { " run \($0.runID)" } ?? "")
        case .status:
            reply.status = try runtime.statusReport(runs: max(0, request.runs ?? 20), days: 7)
            reply.status?.timelines = runtime.timelineSnapshot()
            reply.status?.activities = runtime.activitySnapshot()
            reply.snapshot = runtime.snapshot()
        case .why:
            reply.why = WhyExplainer.explain(try whyFacts(try identifier(request)))
        case .snapshot:
            reply.snapshot = runtime.snapshot()
            reply.timelines = runtime.timelineSnapshot()
            reply.activities = runtime.activitySnapshot()
        case .subscribe:
            connection.subscribed = true
            reply.snapshot = runtime.snapshot()
            reply.timelines = runtime.timelineSnapshot()
            reply.activities = runtime.activitySnapshot()
            reply.message = "subscribed: observations and snapshots follow as they happen"
            // The latest events first, so a new watcher does not start blank.
            var bytes: [UInt8] = []
            append(reply, to: &bytes)
            for observation in recent.suffix(20) {
                var push = ControlReply(id: nil, now: reply.now)
                push.event = "observation"
                push.observation = observation
                append(push, to: &bytes)
            }
            if !connection.write(bytes, maxQueued: limits.maxQueuedBytes) { close(connection) }
            throw Handled()
        case .metrics:
            reply.metrics = metricsText?() ?? ""
        case .reload:
            try reload(request, into: &reply)
        case .activity:
            try activity(request, into: &reply)
        case .stats:
            let counters = try runtime.savedMachineState()?.counters ?? []
            reply.stats = ReloadStats(counters: counters, days: request.days ?? 7, now: runtime.now)
        }
        return reply
    }

    /// `reload`: one kind (`kind`) or every kind (`all`), explicit, or exempt as an app in the
    /// foreground (`foreground`). Over budget a reload is deferred, never dropped.
    func reload(_ request: ControlRequest, into reply: inout ControlReply) throws {
        let reason: ReloadReason = request.foreground == true ? .appForeground : .explicitAPI
        let kinds = Set(runtime.timelineSnapshot().widgets.map(\.kind))
        if request.all == true {
            guard request.kind == nil else {
                throw ControlFailure(code: "bad-request", message: "\"reload\" takes \"kind\" or \"all\": true, not both")
            }
            runtime.reloadAllTimelines(reason: reason)
            reply.message = "asked every widget (\(kinds.count) kind\(kinds.count == 1 ? "" : "s")) for a reload (\(reason))"
        } else {
            guard let kind = request.kind, !kind.isEmpty else {
                throw ControlFailure(code: "bad-request", message: "\"reload\" needs \"kind\": a widget kind, or \"all\": true")
            }
            guard kinds.contains(kind) else {
                let known = kinds.sorted().joined(separator: ", ")
                throw ControlFailure(code: "unknown-kind", message: "no loaded job declares widget kind \"\(kind)\"; expected one of: \(known.isEmpty ? "(none)" : known)")
            }
            runtime.reloadTimelines(ofKind: kind, reason: reason)
            reply.message = "asked \(kind) for a reload (\(reason))"
        }
        reply.timelines = runtime.timelineSnapshot()
    }

    /// `activity`: a start, update or end, as a results-channel activity line; the machine's
    /// refusals come back as error replies with their codes.
    func activity(_ request: ControlRequest, into reply: inout ControlReply) throws {
        let expected = "expected \"activity\": a JSON object as text, like {\"activity\":\"start\",\"id\":\"pack\",\"type\":\"Download\",\"content\":{\"progress\":0.1}}"
        guard let text = request.activity,
              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw ControlFailure(code: "bad-request", message: expected)
        }
        var namespace = "default"
        if let value = object["namespace"] {
            guard let name = value as? String, !name.isEmpty else {
                throw ControlFailure(code: "bad-request", message: "\"namespace\": expected a non-empty string")
            }
            namespace = name
        }
        let now = runtime.now
        switch ResultLine.parse(text, owner: "", namespace: namespace, now: now) {
        case var .activity(.request(start)):
            start.owner = nil  // an operator's activity: no job's end ends it
            try runtime.requestActivity(start)
            reply.message = "started activity \(start.id)"
        case let .activity(.update(update)):
            try runtime.updateActivity(update)
            reply.message = "updated activity \(update.id)"
        case let .activity(.end(id, content, policy, _)):
            try runtime.endActivity(id, content: content, policy: policy)
            reply.message = "ended activity \(id) (dismissal \(policy))"
        case let .badActivity(problem):
            throw ControlFailure(code: "bad-request", message: problem)
        default:
            throw ControlFailure(code: "bad-request", message: expected)
        }
        reply.activities = runtime.activitySnapshot()
    }

    /// What `why` needs from the live runtime (gathered by `RefreshRuntime.whyFacts`, shared
    /// with the offline answer's subject rules).
    func whyFacts(_ id: String) throws -> WhyFacts {
        try runtime.whyFacts(id, recent: recent.filter { $0.identifier == id })
    }
}

/// A command that already wrote its reply (subscribe: the reply and the first events together).
struct Handled: Error {}
