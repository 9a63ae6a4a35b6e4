import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import RefreshdDaemon
import RefreshdDashboard
import RefreshdRuntime
import ServiceLifecycle

/// `refreshd run --http`: the web dashboard, a Hummingbird server on SwiftNIO's threads beside
/// the libuv loop. It is started by `RefreshDaemon` once the jobs are loaded (a companion) and
/// stopped when the loop has returned.
///
/// Pages and `/api/...` are read-only; actions are `POST /api/...` with
/// `Authorization: Bearer TOKEN` (the token file's), answered with the control socket's reply.
/// Every response carries a strict Content-Security-Policy (scripts, styles, images and
/// connections from the dashboard itself only; no inline script), `nosniff`, no referrer,
/// and `no-store`.
package final class WebDashboard: @unchecked Sendable {
    let settings: WebSettings
    let source: DashboardSource
    let logger: Logger
    private var task: Task<Void, any Error>?
    /// Runs the server; `stop` asks it to shut down gracefully (no new connection, answers in
    /// progress finished) rather than cancelling it mid-response. No signal handlers of its
    /// own: refreshd's loop handles SIGTERM and SIGINT.
    private var group: ServiceGroup?
    private var heartbeat: Task<Void, Never>?
    /// The port bound (the one asked for, or the one the system chose for port 0).
    package private(set) var port: Int = 0

    /// How long an idle connection (or one sending its request slowly) is kept.
    static let idleTimeout: TimeAmount = .seconds(30)
    /// The largest request head accepted (all header fields together); larger is refused 400
    /// by the HTTP parser (Hummingbird answers every parser error so) and the connection closed.
    static let maxHeaderBytes = 16 * 1024

    init(settings: WebSettings, parts: DaemonParts, logger: Logger) {
        self.settings = settings
        self.source = DashboardSource(parts: parts)
        self.logger = logger
    }

    /// A companion for `RefreshDaemon.companions`: binds (waiting up to 10 s for the socket),
    /// logs the address, and returns the stop.
    ///
    /// - Throws: `WebSettingsError` when the address cannot be bound (in use, not an address
    ///   of this machine), naming it.
    package static func companion(_ settings: WebSettings, logger: Logger) -> (DaemonParts) throws -> () -> Void {
        { parts in
            let dashboard = WebDashboard(settings: settings, parts: parts, logger: logger)
            try dashboard.start()
            return { dashboard.stop() }
        }
    }

    func start() throws {
        let bound = DispatchSemaphore(value: 0)
        let outcome = ResultBox<Int>()
        let router = Routes(source: source, token: settings.token).router()
        var quiet = Logger(label: "refreshd.web")
        quiet.logLevel = .error
        var decoder = HTTP1Channel.Configuration.DecoderConfiguration()
        decoder.maxHeaderListSize = Self.maxHeaderBytes
        decoder.maxHeaderFieldSize = Self.maxHeaderBytes
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: Self.idleTimeout, httpDecoderConfiguration: decoder)),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                outcome.set(.success(channel.localAddress?.port ?? 0))
                bound.signal()
            },
            logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: quiet))
        self.group = group
        task = Task {
            do {
                try await group.run()
            } catch {
                outcome.set(.failure(error))
                bound.signal()
                throw error
            }
        }
        let feed = source.feed
        heartbeat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(15))
                feed.ping()
            }
        }
        let address = "\(settings.host):\(settings.port)"
        guard bound.wait(timeout: .now() + 10) == .success, let result = outcome.value else {
            stop()
            throw WebSettingsError("--http \(address): the dashboard did not start listening within 10 s")
        }
        switch result {
        case let .success(port):
            self.port = port
            let shown = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
            logger.info("dashboard at http://\(shown):\(port)/ (\(settings.token == nil ? "read-only: no --http-token-file" : "actions need the bearer token"))")
        case let .failure(error):
            stop()
            throw WebSettingsError("--http \(address): cannot listen there: \(error)")
        }
    }

    /// Stops listening and ends the event streams (after the loop has returned).
    func stop() {
        heartbeat?.cancel()
        source.feed.finishAll()
        guard let task else { return }
        self.task = nil
        let group = group
        let done = DispatchSemaphore(value: 0)
        Task {
            await group?.triggerGracefulShutdown()
            _ = try? await task.value
            done.signal()
        }
        if done.wait(timeout: .now() + 3) == .timedOut { task.cancel() }
    }
}

/// A result set once (the first of the server's start and its failure), read after a wait.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var stored: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { lock.withLock { if stored == nil { stored = result } } }
    var value: Result<T, any Error>? { lock.withLock { stored } }
}
