import RefreshdRuntime

extension ControlServer {
    /// Carries out one request for another server of the daemon's (the web dashboard) exactly
    /// as a socket line is carried out: the same bounds, the same command code, the same reply
    /// and error codes; a command that changes state is its own commit group, so the reply says
    /// `not-saved` when its change was not committed. `done` gets the reply: at once, or on a
    /// cluster node once the leaders applied the command (any thread). Loop thread only (the caller hands it
    /// there with `performOnLoop`). `status` (it reads the store) and `subscribe` (it pushes to a
    /// socket) are not served here: the caller reads the store off the loop and observes the
    /// runtime itself.
    package func answer(_ request: ControlRequest, done: @escaping @Sendable (ControlReply) -> Void) {
        let item = decodeRequest(request)
        guard case let .request(request, command) = item else {
            if case let .refused(reply) = item { return done(reply) }
            return done(.failure(id: request.id, ControlFailure(code: "internal", message: "undecodable request")))
        }
        guard command != .status, command != .subscribe, command != .runStats else {
            return done(.failure(id: request.id, ControlFailure(code: "bad-request", message: "\(command.rawValue) is served only on the control socket")))
        }
        // A cluster node: the database answers, as on its socket (`ClusterControl`).
        if let clusterAnswer {
            do {
                try request.checkBounds(now: runtime.now)
                switch clusterAnswer(request, command) {
                case let .now(reply)?: return done(reply)
                case let .later(start)?: return start(done)
                case nil: break
                }
            } catch {
                return done(.failure(id: request.id, ControlFailure(of: error)))
            }
        }
        var result = ControlReply.failure(id: request.id, ControlFailure(code: "internal", message: "no reply"))
        let (_, committed) = runtime.grouped {
            do {
                try request.checkBounds(now: runtime.now)
                result = try perform(command, request, nil)
            } catch {
                // As the socket answers it (`unknown-instance`, `bad-key`...), not `internal`.
                result = .failure(id: request.id, ControlFailure(of: error))
            }
        }
        if command.changesState, !committed, result.ok {
            return done(.failure(id: request.id, ControlFailure(
                code: "not-saved", message: "the change was not saved (the state could not be committed); refreshd is stopping")))
        }
        done(result)
    }

    /// The checks `decode` makes of a line, made of a request already decoded.
    func decodeRequest(_ request: ControlRequest) -> Incoming {
        guard request.v == ControlRequest.version else {
            return .refused(.failure(id: request.id, ControlFailure(
                code: "unsupported-version", message: "protocol version \(request.v) is not spoken here; expected \"v\":\(ControlRequest.version)")))
        }
        guard let command = ControlCommandName(rawValue: request.command) else {
            let known = ControlCommandName.allCases.filter(\.isSupported).map(\.rawValue).joined(separator: ", ")
            return .refused(.failure(id: request.id, ControlFailure(
                code: "unknown-command", message: "unknown command \"\(request.command)\"; expected one of \(known)")))
        }
        return .request(request, command)
    }

    /// The latest observations (loop thread): what `why` reads, for a caller that has none.
    package var recentObservations: [RuntimeObservation] { recent }
}

/// A reply now, or one that comes later (a cluster node's command, once its leaders applied
/// it): `start` is given where to hand the reply (any thread).
package enum ControlAnswer: Sendable {
    case now(ControlReply)
    case later(@Sendable (_ deliver: @escaping @Sendable (ControlReply) -> Void) -> Void)
}
