import CLibUV
import Foundation
import Glibc
import Refreshd
import RefreshdStore
import RefreshdCore
import RefreshdRuntime

/// The control socket: `STATE/control.sock`, a Unix domain socket served on the scheduler's
/// libuv loop, speaking the JSON-lines protocol of `ControlRequest` / `ControlReply`.
///
/// It is bound only after the state-directory lock is taken (the scheduler takes it), so a socket
/// file found there was left by a dead refreshd and is replaced; a second refreshd on the same
/// directory never gets this far. The file is created with mode 0600 and a peer whose uid is
/// neither refreshd's nor root is refused (`SO_PEERCRED`). Every client is bounded (line length,
/// queued output), handled on the loop thread without blocking, and closed on any misbehaviour
/// without touching the others. Observations reach subscribers pushed, coalesced per loop turn,
/// with a fresh snapshot after them.
package final class ControlServer: @unchecked Sendable {
    /// Bounds per client and in total. Every number a client can make grow is bounded here.
    package struct Limits: Sendable {
        /// A request line longer than this is refused and the connection closed.
        package var maxLineBytes = 64 * 1024
        /// Output waiting for a client beyond this closes it (a client that does not read).
        package var maxQueuedBytes = 4 * 1024 * 1024
        /// Clients connected at once; one more is answered `too-many-clients` and closed.
        package var maxClients = 64
        /// Subscribed clients (`watch`) at once; one more is refused `too-many-subscribers`.
        package var maxSubscribers = 16
        /// Pushed output waiting for one subscriber beyond this closes it.
        package var maxSubscriberQueuedBytes = 1024 * 1024
        /// Descriptors kept free for launches (pipes, /dev/null, the spawn's own): a client that
        /// would leave fewer free is answered `no-descriptors` and closed.
        package var descriptorReserve = 256
        /// Request lines handled per client per loop turn: the rest wait for the next turn
        /// (reading from that client pauses), so timers and launches run in between.
        package var linesPerClientPerTurn = 16
        /// Request lines handled per loop turn across all clients.
        package var linesPerTurn = 64
        package init() {}
    }

    package let path: String
    let stateDirectory: String
    let scheduler: RefreshScheduler
    var runtime: RefreshRuntime { scheduler.runtime }
    let limits: Limits
    let serverUID: UInt32
    /// Reads peers' uids through this (tests stand in another uid).
    var peerUID: (ControlConnection) -> UInt32? = { $0.peer?.uid }
    // Loop thread only.
    var listener: UnsafeMutablePointer<uv_pipe_t>?
    var connections: [Int: ControlConnection] = [:]
    var nextNumber = 0
    let readBuffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    /// The latest observations, oldest first (for `why` and a new watcher's first screen).
    var recent: [RuntimeObservation] = []
    static let recentCapacity = 200
    /// Called on the loop thread with each batch of observations (metrics).
    var listeners: [([RuntimeObservation]) -> Void] = []
    var closed = false
    /// Clients with complete lines waiting (reading paused), served from `idle` each turn.
    var backlog: [ControlConnection] = []
    /// Active while `backlog` is not empty: the loop polls without blocking and calls it once a
    /// turn. (An idle handle, not a 0 ms timer: libuv 1.44 runs a 0 ms timer started from a
    /// timer callback in the same turn, again and again.)
    var idle: UnsafeMutablePointer<uv_idle_t>?
    /// Runs once a turn after polling: the turn's line budget starts again.
    var check: UnsafeMutablePointer<uv_check_t>?
    /// Lines still allowed this loop turn.
    var turnBudget = 0
    /// The descriptor limit (soft, after raising it): the reserve is counted from it.
    var descriptorLimit: Int = 1024
    /// Replies of the open commit group: written when the group is committed.
    var deferred: [(reply: ControlReply, changed: Bool)]?
    /// Status reports are read and encoded here, off the loop, on a read-only connection.
    let statusQueue = DispatchQueue(label: "refreshd.control.status")
    /// Status queue only.
    var readOnlyStore: StateStore?
    /// The Prometheus text for the `metrics` command, when metrics are kept.
    var metricsText: (() -> String)?
    // Guarded by `inboxLock`: observations from any thread, waiting for the loop.
    let inboxLock = Lock()
    var inbox: [RuntimeObservation] = []
    var flushScheduled = false
    /// A publication was made: push a fresh snapshot at the next flush even without observations.
    var snapshotWanted = false
    /// In cluster mode (issue 24, `ClusterControl`): answers a command from the database instead
    /// of the (empty) runtime this server's loop belongs to; nil leaves the command to the server.
    /// Every request of a client then runs alone (a reply may come later: in order, one at a time).
    var clusterAnswer: ((ControlRequest, ControlCommandName) -> ControlAnswer?)?
    /// In cluster mode: every shard's snapshot and who leads each shard, from the database
    /// (`ClusterControl.view`), for `subscribe` and the pushed snapshots instead of the empty
    /// runtime's; nil when the database cannot be read (the last one read stays).
    var clusterView: (() -> (snapshot: SchedulerSnapshot, cluster: ClusterStatus)?)?
    /// Called (loop thread) when a client subscribes in cluster mode: the daemon starts pushing
    /// the cluster every second (`pushClusterView`) while someone watches.
    var onClusterSubscriber: (() -> Void)?
    /// The last cluster view read (loop thread).
    var lastClusterView: (snapshot: SchedulerSnapshot, cluster: ClusterStatus)?

    /// The socket's path for a state directory.
    package static func socketPath(stateDirectory: String) -> String { stateDirectory + "/control.sock" }

    package init(scheduler: RefreshScheduler, stateDirectory: String, limits: Limits = Limits()) {
        self.scheduler = scheduler
        self.stateDirectory = stateDirectory
        self.path = Self.socketPath(stateDirectory: stateDirectory)
        self.limits = limits
        serverUID = getuid()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        turnBudget = limits.linesPerTurn
    }

    deinit {
        readBuffer.deallocate()
        readOnlyStore?.close()
    }

    /// Binds and listens (on the loop's thread, before or while it runs), and starts receiving
    /// the runtime's observations.
    ///
    /// - Throws: `ControlFailure` naming the path when the socket cannot be made: the path is too
    ///   long for a Unix socket, something that is not a socket is in the way, or bind fails.
    package func start() throws {
        guard path.utf8.count < 108 else {
            throw ControlFailure(code: "path-too-long", message: "control socket path \(path) is \(path.utf8.count) bytes; a Unix socket path must be under 108: use a shorter --state path")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw ControlFailure(code: "in-the-way", message: "\(path) exists and is not a socket; refreshd will not replace it: move it aside")
            }
            // We hold the state directory's lock: whoever made this socket is dead.
            unlink(path)
        }
        Glibc.signal(SIGPIPE, SIG_IGN)  // a vanished client is an error value, not a signal
        descriptorLimit = Self.raiseDescriptorLimit()
        let pipe = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
        uv_pipe_init(scheduler.loop, pipe, 0)
        pipe.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let previous = umask(0o177)  // born 0600: never a moment with a wider mode
        let bound = uv_pipe_bind(pipe, path)
        umask(previous)
        guard bound == 0 else {
            closeAndFree(pipe)
            throw ControlFailure(code: "bind", message: "cannot create the control socket \(path): \(String(cString: uv_strerror(bound)))")
        }
        chmod(path, 0o600)
        let stream = UnsafeMutableRawPointer(pipe).assumingMemoryBound(to: uv_stream_t.self)
        let listening = uv_listen(stream, 4096) { server, status in
            guard let data = server?.pointee.data else { return }
            Unmanaged<ControlServer>.fromOpaque(data).takeUnretainedValue().accept(status: status)
        }
        guard listening == 0 else {
            closeAndFree(pipe)
            unlink(path)
            throw ControlFailure(code: "listen", message: "cannot listen on \(path): \(String(cString: uv_strerror(listening)))")
        }
        listener = pipe
        let idle = UnsafeMutablePointer<uv_idle_t>.allocate(capacity: 1)
        uv_idle_init(scheduler.loop, idle)
        idle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        self.idle = idle
        let check = UnsafeMutablePointer<uv_check_t>.allocate(capacity: 1)
        uv_check_init(scheduler.loop, check)
        check.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_check_start(check) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<ControlServer>.fromOpaque(data).takeUnretainedValue().turnEnded()
        }
        uv_unref(UnsafeMutableRawPointer(check).assumingMemoryBound(to: uv_handle_t.self))
        self.check = check
        runtime.observe { [weak self] observation in self?.observed(observation) }
        scheduler.publicationListeners.append { [weak self] _ in self?.published() }
    }

    /// Clients and runs need descriptors: the soft limit goes up to the hard one. Returns the
    /// soft limit in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            let wanted = limit.rlim_max
            limit.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY: all ones, clamped to Int.max
    }

    // MARK: Observations (any thread) to the loop

    func observed(_ observation: RuntimeObservation) {
        if observation.kind == .stopped, scheduler.onLoopThread {
            inboxLock.withLock { inbox.append(observation) }
            flush()
            close()
            return
        }
        let schedule = inboxLock.withLock { () -> Bool in
            inbox.append(observation)
            if flushScheduled { return false }
            flushScheduled = true
            return true
        }
        if schedule { scheduler.performOnLoop { [weak self] in self?.flush() } }
    }

    /// A widget entry or an activity was published (loop thread): watchers get a fresh snapshot
    /// at the end of this loop turn, once however many publications it made.
    func published() {
        let schedule = inboxLock.withLock { () -> Bool in
            snapshotWanted = true
            if flushScheduled { return false }
            flushScheduled = true
            return true
        }
        if schedule { scheduler.performOnLoop { [weak self] in self?.flush() } }
    }

    /// Loop thread: hands the observations gathered since the last turn to listeners, keeps the
    /// latest, and pushes them (then one fresh snapshot) to subscribers.
    func flush() {
        let (batch, wanted) = inboxLock.withLock { () -> ([RuntimeObservation], Bool) in
            flushScheduled = false
            defer {
                inbox.removeAll()
                snapshotWanted = false
            }
            return (inbox, snapshotWanted)
        }
        guard !batch.isEmpty || wanted else { return }
        recent.append(contentsOf: batch)
        if recent.count > Self.recentCapacity { recent.removeFirst(recent.count - Self.recentCapacity) }
        for listener in listeners { listener(batch) }
        let subscribers = connections.values.filter { $0.subscribed && !$0.closing }
        guard !subscribers.isEmpty else { return }
        var bytes: [UInt8] = []
        let now = runtime.now
        for observation in batch {
            var push = ControlReply(id: nil, now: now)
            push.event = "observation"
            push.observation = observation
            append(push, to: &bytes)
        }
        var push = ControlReply(id: nil, now: now)
        push.event = "snapshot"
        if clusterView != nil {
            // Cluster mode: the last view read (`pushClusterView` reads it again every second).
            push.snapshot = lastClusterView?.snapshot
            push.cluster = lastClusterView?.cluster
        } else {
            push.snapshot = runtime.snapshot()
            push.timelines = runtime.timelineSnapshot()
            push.activities = runtime.activitySnapshot()
        }
        append(push, to: &bytes)
        for connection in subscribers where !connection.write(bytes, maxQueued: limits.maxSubscriberQueuedBytes) {
            close(connection)
        }
    }

    /// Cluster mode (loop thread): reads the cluster again and pushes it to the subscribers as a
    /// snapshot event. Answers whether anyone still watches (the daemon stops its timer when not).
    @discardableResult
    func pushClusterView() -> Bool {
        let subscribers = connections.values.filter { $0.subscribed && !$0.closing }
        guard !subscribers.isEmpty else { return false }
        if let view = clusterView?() { lastClusterView = view }
        var push = ControlReply(id: nil, now: runtime.now)
        push.event = "snapshot"
        push.snapshot = lastClusterView?.snapshot
        push.cluster = lastClusterView?.cluster
        var bytes: [UInt8] = []
        append(push, to: &bytes)
        for connection in subscribers where !connection.write(bytes, maxQueued: limits.maxSubscriberQueuedBytes) {
            close(connection)
        }
        return true
    }

    func append(_ reply: ControlReply, to bytes: inout [UInt8]) {
        if let data = try? encoder.encode(reply) {
            bytes.append(contentsOf: data)
            bytes.append(0x0A)
        }
    }

    // MARK: Connections

    func accept(status: Int32) {
        guard status == 0, let listener, !closed else { return }
        nextNumber += 1
        let connection = ControlConnection(number: nextNumber, server: self)
        uv_pipe_init(scheduler.loop, connection.pipe, 0)
        connection.pipe.pointee.data = Unmanaged.passUnretained(connection).toOpaque()
        let others = connections.values.reduce(0) { $0 + ($1.closing ? 0 : 1) }
        connections[connection.number] = connection
        let server = UnsafeMutableRawPointer(listener).assumingMemoryBound(to: uv_stream_t.self)
        guard uv_accept(server, connection.stream) == 0 else {
            close(connection)
            return
        }
        if let refusal = admission(connection, others: others) {
            reply(.failure(id: nil, refusal), to: connection)
            finish(connection)
            return
        }
        connection.peer = PeerCredentials.of(socket: connection.fileDescriptor)
        guard let uid = peerUID(connection), PeerCredentials.allows(peerUID: uid, serverUID: serverUID) else {
            let who = peerUID(connection).map { "uid \($0)" } ?? "a peer whose uid cannot be read"
            reply(.failure(id: nil, ControlFailure(
                code: "permission-denied",
                message: "\(who) may not use this control socket; expected refreshd's user (uid \(serverUID)) or root")),
                  to: connection)
            finish(connection)
            return
        }
        startReading(connection)
    }

    /// Why a new client is turned away, if it is: too many clients, or its descriptor is in the
    /// reserve kept for launches (descriptors are given lowest first, so a client whose number
    /// is that high means fewer than the reserve are free).
    func admission(_ connection: ControlConnection, others: Int) -> ControlFailure? {
        if others >= limits.maxClients {
            return ControlFailure(code: "too-many-clients", message: "refreshd already serves \(others) control clients, the most it takes at once (run --max-control-clients); try again when one has gone")
        }
        let fd = Int(connection.fileDescriptor)
        if fd < 0 || fd >= descriptorLimit - limits.descriptorReserve {
            return ControlFailure(code: "no-descriptors", message: "refreshd keeps its last \(limits.descriptorReserve) file descriptors (of \(descriptorLimit)) for launching jobs and this client would use one; try again when clients have gone")
        }
        return nil
    }

    /// Closes after what was written has gone out (a last error reply).
    func finish(_ connection: ControlConnection) {
        guard !connection.closing else { return }
        connection.closing = true
        uv_read_stop(connection.stream)
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passUnretained(connection).toOpaque()
        let rc = uv_shutdown(request, connection.stream) { request, _ in
            guard let request else { return }
            if let data = request.pointee.data {
                let connection = Unmanaged<ControlConnection>.fromOpaque(data).takeUnretainedValue()
                connection.server?.closeHandle(connection)
            }
            request.deallocate()
        }
        if rc != 0 {
            request.deallocate()
            closeHandle(connection)
        }
    }

    /// Closes a client now (gone, too slow, or refreshd stopping).
    func close(_ connection: ControlConnection) {
        connection.closing = true
        closeHandle(connection)
    }

    private var handlesClosing: Set<Int> = []

    func closeHandle(_ connection: ControlConnection) {
        guard handlesClosing.insert(connection.number).inserted else { return }
        let handle = UnsafeMutableRawPointer(connection.pipe).assumingMemoryBound(to: uv_handle_t.self)
        uv_close(handle) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let connection = Unmanaged<ControlConnection>.fromOpaque(data).takeUnretainedValue()
            handle.pointee.data = nil
            if let server = connection.server {
                server.connections[connection.number] = nil
                server.handlesClosing.remove(connection.number)
            }
            UnsafeMutableRawPointer(handle).deallocate()
        }
    }

    /// Stops listening, closes every client and removes the socket file (loop thread; at stop).
    package func close() {
        guard !closed else { return }
        closed = true
        if let listener {
            closeAndFree(listener)
            self.listener = nil
            unlink(path)
        }
        if let idle { closeAndFree(idle) }
        if let check { closeAndFree(check) }
        idle = nil
        check = nil
        backlog.removeAll()
        for connection in connections.values { close(connection) }
    }

    /// How many clients are connected now (loop thread).
    var connectionCount: Int { connections.count }
}
