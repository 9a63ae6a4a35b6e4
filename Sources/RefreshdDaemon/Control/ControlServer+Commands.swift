import Foundation
import Glibc
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// The control protocol's commands, carried out on the loop thread against the live runtime.
extension ControlServer {
    /// One request line, decoded (or the error reply it gets).
    enum Incoming {
        case request(ControlRequest, ControlCommandName)
        case refused(ControlReply)

        /// Handled outside a commit group: it reads the store (which must see the requests
        /// before it committed), or writes more than its reply (`subscribe`).
        var runsAlone: Bool {
            guard case let .request(_, command) = self else { return false }
            return [.status, .why, .stats, .subscribe].contains(command)
        }
    }

    func decode(_ line: [UInt8]) -> Incoming {
        let request: ControlRequest
        do {
            request = try decoder.decode(ControlRequest.self, from: Data(line))
        } catch let DecodingError.keyNotFound(key, _) {
            return .refused(.failure(id: Self.requestID(line), ControlFailure(
                code: "bad-request", message: "the request has no \"\(key.stringValue)\"; expected {\"v\":1,\"command\":\"...\"}")))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .refused(.failure(id: Self.requestID(line), ControlFailure(
                code: "bad-request", message: "\"\(field)\" has the wrong type: \(context.debugDescription)")))
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .refused(.failure(id: Self.requestID(line), ControlFailure(
                code: "bad-request", message: "\"\(field)\": \(context.debugDescription)")))
        } catch {
            return .refused(.failure(id: nil, ControlFailure(
                code: "bad-json", message: "the line is not a JSON object; expected one object per line such as {\"v\":1,\"command\":\"pending\"}")))
        }
        let id = request.id
        guard request.v == ControlRequest.version else {
            return .refused(.failure(id: id, ControlFailure(
                code: "unsupported-version", message: "protocol version \(request.v) is not spoken here; expected \"v\":\(ControlRequest.version)")))
        }
        guard let command = ControlCommandName(rawValue: request.command) else {
            let known = ControlCommandName.allCases.filter(\.isSupported).map(\.rawValue).joined(separator: ", ")
            return .refused(.failure(id: id, ControlFailure(
                code: "unknown-command", message: "unknown command \"\(request.command)\"; expected one of \(known)")))
        }
        return .request(request, command)
    }

    /// Carries out a client's lines of this turn in order: runs of them in one commit group
    /// (one transaction; replies written once it is committed, each change reported `not-saved`
    /// if it was not), the others alone.
    func execute(_ items: [Incoming], from connection: ControlConnection) {
        var index = 0
        while index < items.count, !connection.closing {
            if runsAlone(items[index]) {
                handle(items[index], from: connection)
                index += 1
                continue
            }
            var end = index
            while end < items.count, !runsAlone(items[end]) { end += 1 }
            deferred = []
            let range = index..<end
            let (_, committed) = runtime.grouped {
                for item in items[range] { handle(item, from: connection) }
            }
            let replies = deferred ?? []
            deferred = nil
            var bytes: [UInt8] = []
            for (reply, changed) in replies {
                if changed, !committed, reply.ok {
                    append(.failure(id: reply.id, ControlFailure(
                        code: "not-saved", message: "the change was not saved (the state could not be committed); refreshd is stopping")), to: &bytes)
                } else {
                    append(reply, to: &bytes)
                }
            }
            if !bytes.isEmpty { send(bytes, to: connection) }
            index = end
        }
    }

    /// Whether `item` is handled outside a commit group, the last of its turn: one that reads
    /// the store or pushes (`Incoming.runsAlone`), and on a cluster node every request (its
    /// reply may wait for the leaders; the client's next lines wait for it).
    func runsAlone(_ item: Incoming) -> Bool { clusterAnswer != nil || item.runsAlone }

    func handle(_ item: Incoming, from connection: ControlConnection) {
        guard case let .request(request, command) = item else {
            if case let .refused(reply) = item { self.reply(reply, to: connection) }
            return
        }
        let id = request.id
        do {
            try request.checkBounds(now: runtime.now)
            if let clusterAnswer, let answer = clusterAnswer(request, command) {
                switch answer {
                case let .now(answer): return reply(answer, to: connection)
                case let .later(start): return answerLater(start, request, connection)
                }
            }
            if command == .status { return try startStatus(request, connection) }
            if command == .runStats { return startRunStats(request, connection) }
            reply(try perform(command, request, connection), to: connection, changed: command.changesState)
        } catch is Handled {
            return
        } catch {
            reply(.failure(id: id, ControlFailure(of: error)), to: connection)
        }
    }

    /// `status`: the live parts (snapshot, widgets, activities) now, on the loop; the store's
    /// parts (runs, counters) read and the reply encoded on `statusQueue`, from a read-only
    /// connection (WAL: it sees what was committed, never blocks the writer). The client's
    /// later lines wait for this reply, so replies stay in order.
    func startStatus(_ request: ControlRequest, _ connection: ControlConnection) throws {
        var live = ControlReply(id: request.id, now: runtime.now)
        live.snapshot = runtime.snapshot()
        let timelines = runtime.timelineSnapshot()
        let activities = runtime.activitySnapshot()
        let tracking = scheduler.processTracking
        let runs = request.runs ?? 20
        let before = request.before
        readOffLoop(request, live, connection) { reader, reply in
            var status = try reader.status(runs: runs, days: 7, before: before)
            status.timelines = timelines
            status.activities = activities
            status.processTracking = tracking
            reply.status = status
        }
    }

    /// `run-stats`: the runs counted off the loop, as `status` reads the store.
    func startRunStats(_ request: ControlRequest, _ connection: ControlConnection) {
        let now = runtime.now
        readOffLoop(request, ControlReply(id: request.id, now: now), connection) { reader, reply in
            reply.runStats = try RunStats.answer(request, reader, now: now)
        }
    }

    /// Reads the state on the status queue through the read-only connection (a scan of the
    /// history never holds the loop), fills `base` with `fill`, and writes the reply back on the
    /// loop; the connection reads no further request meanwhile.
    func readOffLoop(_ request: ControlRequest, _ base: ControlReply, _ connection: ControlConnection,
                     _ fill: @escaping @Sendable (StateReader, inout ControlReply) throws -> Void) {
        let directory = stateDirectory
        connection.busy = true
        statusQueue.async { [self] in
            var reply = base
            var bytes: [UInt8] = []
            do {
                if readOnlyStore == nil { readOnlyStore = try StateStore.open(directory: directory, readOnly: true) }
                try fill(StateReader(stores: [readOnlyStore!], jobs: []), &reply)
                bytes = try JSONEncoder.control.encode(reply) + [0x0A]
            } catch {
                readOnlyStore?.close()
                readOnlyStore = nil
                let failure = ControlReply.failure(id: request.id, ControlFailure(code: "internal", message: "the state could not be read: \(error)"))
                bytes = ((try? JSONEncoder.control.encode(failure)) ?? Data()) + [0x0A]
            }
            resume(connection, writing: bytes)
        }
    }

    /// The `id` of a request that did not decode, if it has a readable one.
    static func requestID(_ line: [UInt8]) -> Int? {
        (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["id"] as? Int
    }

    func perform(_ command: ControlCommandName, _ request: ControlRequest,
                 _ connection: ControlConnection?) throws -> ControlReply {
        var reply = ControlReply(id: request.id, now: runtime.now)
        switch command {
        case .hello:
            reply.hello = ControlHello(protocolVersion: ControlRequest.version, pid: getpid(),
                                       stateDirectory: stateDirectory,
                                       commands: ControlCommandName.allCases.filter(\.isSupported).map(\.rawValue),
                                       maxConcurrentRuns: runtime.options.configuration.maxConcurrentRuns)
        case .status, .runStats:
            // Served by `startStatus` and `startRunStats`, off the loop.
            throw ControlFailure(code: "internal", message: "\(command.rawValue) is served apart")
        case .why:
            reply.why = WhyExplainer.explain(try whyFacts(try RefreshRuntime.identifier(request)))
        case .subscribe:
            // Another server of the daemon's (the web dashboard) has no socket to push to.
            guard let connection else { throw ControlFailure(code: "bad-request", message: "subscribe needs a control socket connection") }
            if !connection.subscribed {
                let subscribers = connections.values.filter { $0.subscribed && !$0.closing }.count
                guard subscribers < limits.maxSubscribers else {
                    throw ControlFailure(code: "too-many-subscribers", message: "refreshd already pushes events to \(subscribers) subscribers, the most it takes at once; try again when one has gone")
                }
            }
            if let clusterView {
                // Cluster mode: every shard, from the database, and who leads each.
                if let view = clusterView() { lastClusterView = view }
                guard let view = lastClusterView else {
                    throw ControlFailure(code: "database", message: "the cluster's database could not be read; watch again when it answers")
                }
                connection.subscribed = true
                reply.snapshot = view.snapshot
                reply.cluster = view.cluster
                onClusterSubscriber?()
            } else {
                connection.subscribed = true
                reply.snapshot = runtime.snapshot()
                reply.timelines = runtime.timelineSnapshot()
                reply.activities = runtime.activitySnapshot()
            }
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
            if !connection.write(bytes, maxQueued: limits.maxSubscriberQueuedBytes) { close(connection) }
            throw Handled()
        case .metrics:
            reply.metrics = metricsText?() ?? ""
        default:
            // The commands on the runtime's state: one function for every server and node.
            guard let answered = try runtime.performOperatorCommand(command, request) else {
                throw ControlFailure(code: "internal", message: "\(command.rawValue) has no answer")
            }
            return answered
        }
        return reply
    }

    /// What `why` needs from the live runtime (gathered by `RefreshRuntime.whyFacts`, shared
    /// with the offline answer's subject rules).
    func whyFacts(_ id: String) throws -> WhyFacts {
        try runtime.whyFacts(id, recent: recent.filter { $0.identifier == id })
    }
}

/// A command that already wrote its reply (subscribe: the reply and the first events together).
struct Handled: Error {}

extension ControlCommandName {
    /// Feeds the machines an event whose changes are committed (its reply says it was done).
    var changesState: Bool {
        [.submit, .cancel, .cancelAll, .simulateLaunch, .simulateExpiration, .reload, .activity,
         .instanceAdd, .instanceRemove, .pause, .resume].contains(self)
    }
}

extension JSONEncoder {
    /// The control protocol's encoder (for threads other than the loop's).
    static var control: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
