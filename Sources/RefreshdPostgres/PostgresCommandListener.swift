import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// LISTEN/NOTIFY for operator commands in cluster mode (issue 24): a `ctl` command queued in
/// `refreshd.commands` by any node comes with `NOTIFY refreshd_commands, 'SHARD'` in the same
/// transaction (`PostgresDatabase.enqueueCommands`, and a sync run's outbox); every node LISTENs on a connection of its own (`start`) and wakes its
/// shards' leaders, which apply the command at once instead of at their next survey.
///
/// A leader's commit that applies a command sends `NOTIFY refreshd_commands, 'applied:ID'`: the
/// node waiting to answer the operator reads that command's outcome (`.applied`).
///
/// Only a wake-up, never the command itself: a notification lost (the listener reconnecting,
/// the server restarted, a NOTIFY that failed) delays the command to the leader's next survey
/// (every lease / 3), and the table, not the notification, makes it applied exactly once. After
/// each (re)connect the listener reports `nil` (every shard), since commands may have been
/// queued while it was not listening.
///
/// The listening thread blocks in `poll` on the connection's socket and a pipe that `stop`
/// writes to: nothing polls on a timer. A broken connection is reconnected after
/// `retryDelay` (waited in the same `poll`, so `stop` is immediate).
package final class PostgresCommandListener: @unchecked Sendable {
    package static let channel = "refreshd_commands"
    /// The payload's prefix of a commit that applied a command, before its id (any other
    /// payload is a shard's number).
    package static let appliedPrefix = "applied:"
    /// What a notification says.
    package enum Notice: Sendable, Equatable {
        /// Commands were queued for `shard` (nil: maybe for any shard, after a reconnect).
        case queued(shard: Int?)
        /// A leader applied command `id` (nil: maybe any, after a reconnect): its outcome can be read.
        case applied(id: String?)
    }
    let conninfo: String
    let onNotify: @Sendable (Notice) -> Void
    let retryDelay: Duration
    /// The wake pipe: `stop` writes, the thread reads.
    private var pipeFDs: [Int32] = [-1, -1]
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Mutex(false)

    /// `conninfo`: what `refreshd run --store` was given (a URL or a libpq conninfo).
    package init(connection conninfo: String, retryDelay: Duration = .seconds(1),
                onNotify: @escaping @Sendable (Notice) -> Void) {
        self.conninfo = conninfo
        self.retryDelay = retryDelay
        self.onNotify = onNotify
    }

    deinit {
        for fd in pipeFDs where fd >= 0 { close(fd) }
    }

    /// Starts listening on a thread of its own.
    package func start() {
        pipeFDs.withUnsafeMutableBufferPointer { _ = pipe($0.baseAddress!) }
        for fd in pipeFDs where fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // a job must not inherit it
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        let thread = Thread { [self] in
            listen()
            finished.signal()
        }
        thread.name = "refreshd-listen"
        thread.start()
        self.thread = thread
    }

    /// Stops listening and waits for the thread.
    package func stop() {
        guard thread != nil, !stopping.withLock({ let was = $0; $0 = true; return was }) else { return }
        var byte: UInt8 = 1
        _ = write(pipeFDs[1], &byte, 1)
        finished.wait()
    }

    /// Opens a connection with bounds on every wait (connect, TCP, each statement).
    static func connect(_ conninfo: String) -> OpaquePointer? {
        let keys = ["dbname", "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                    "options", "application_name"]
        let values = [conninfo, "5", "1", "5", "2", "3", "-c statement_timeout=5000", "refreshd-listen"]
        let cKeys = keys.map { strdup($0) } + [nil]
        let cValues = values.map { strdup($0) } + [nil]
        defer {
            cKeys.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        let connection = cKeys.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            cValues.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard let connection else { return nil }
        guard PQstatus(connection) == CONNECTION_OK else {
            PQfinish(connection)
            return nil
        }
        return connection
    }

    private var stopped: Bool { stopping.withLock { $0 } }

    /// Waits for the wake pipe (and `socket`, when given) up to `timeout` ms (-1: no bound).
    /// Returns false when `stop` was called.
    private func wait(socket: Int32?, timeout: Int32) -> (stop: Bool, readable: Bool) {
        var fds = [pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)]
        if let socket { fds.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let rc = poll(&fds, nfds_t(fds.count), timeout)
        if rc < 0 { return (stopped, false) }
        if fds[0].revents != 0 || stopped { return (true, false) }
        return (false, fds.count > 1 && fds[1].revents != 0)
    }

    private func listen() {
        let retry = Int32(retryDelay.components.seconds * 1000 + retryDelay.components.attoseconds / 1_000_000_000_000_000)
        while !stopped {
            guard let connection = Self.connect(conninfo) else {
                if wait(socket: nil, timeout: retry).stop { return }
                continue
            }
            defer { PQfinish(connection) }
            let listening = PQexec(connection, "LISTEN \(Self.channel)")
            let ok = PQresultStatus(listening) == PGRES_COMMAND_OK
            PQclear(listening)
            guard ok else {
                if wait(socket: nil, timeout: retry).stop { return }
                continue
            }
            // Commands queued (or applied) while nobody listened: every shard looks now, and
            // whoever waits for an outcome reads again.
            onNotify(.queued(shard: nil))
            onNotify(.applied(id: nil))
            let socket = PQsocket(connection)
            while true {
                let (stop, readable) = wait(socket: socket, timeout: -1)
                if stop { return }
                guard readable else { continue }
                guard PQconsumeInput(connection) == 1 else { break }  // broken: reconnect
                while let notification = PQnotifies(connection) {
                    let payload = notification.pointee.extra.map { String(cString: $0) }
                    PQfreemem(notification)
                    if let payload, payload.hasPrefix(Self.appliedPrefix) {
                        onNotify(.applied(id: String(payload.dropFirst(Self.appliedPrefix.count))))
                    } else {
                        onNotify(.queued(shard: payload.flatMap { Int($0) }))
                    }
                }
            }
            if wait(socket: nil, timeout: retry).stop { return }
        }
    }
}
