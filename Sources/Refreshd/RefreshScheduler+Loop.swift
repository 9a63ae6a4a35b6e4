import CLibUV
import Glibc
import RefreshdCore

extension RefreshScheduler {
    /// Runs the loop on the calling thread until the scheduler has stopped.
    ///
    /// - Throws: `SchedulerFailure` if state could not be committed (refreshd stops rather than
    ///   run on without durable state).
    public func run() throws {
        loopThread = pthread_self()
        prepareSignals()
        clockWatch?.start()
        // After the watches start: a stop requested before run() ends the loop at once, and
        // closing the handles must find every one of them.
        runtime.restoreSavedState()
        runtime.drain()
        uv_run(loop, UV_RUN_DEFAULT)
        loopThread = nil
        releaseState()
        if let failure { throw SchedulerFailure(message: failure) }
    }

    /// The uv_async callback: another thread queued effects or work (or a test injected a clock set).
    func woken() {
        if lock.withLock({ () -> Bool in defer { clockSetInjected = false }; return clockSetInjected }) {
            runtime.clockWasSet(clocks: readClocks())
        }
        runtime.drain()
        let tasks = lock.withLock { () -> [@Sendable () -> Void] in
            defer { loopTasks.removeAll() }
            return loopTasks
        }
        for task in tasks { task() }
        runtime.drain()
    }

    func closeHandles() {
        guard !closing else { return }
        closing = true
        monitor?.stop()
        clockWatch?.stop()
        for watch in directoryWatches { watch.close() }
        directoryWatches.removeAll()
        for timer in timers { timer.close() }
        timers.removeAll()
        uv_timer_stop(timer)
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
        lock.withLock {
            asyncOpen = false
            uv_close(UnsafeMutableRawPointer(async).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
        childWatchMade?.close()
        for s in signals {
            uv_signal_stop(s)
            uv_close(UnsafeMutableRawPointer(s).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
    }

    /// The signals a daemon handles on the loop: stop (TERM, INT), reload (HUP), a status line
    /// (USR1), and ones whose default action would kill refreshd with no stop sequence, logged
    /// and otherwise ignored (USR2, ALRM, VTALRM, PROF; refreshd arms no interval timer).
    static let handledSignals = [SIGTERM, SIGINT, SIGHUP] + nonStopSignals
    /// The handled signals that neither stop nor reload (USR1 and the logged ones): the daemon
    /// ignores them until the loop handles them.
    package static let nonStopSignals = [SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF]

    /// A process can start with signals blocked (a parent's thread mask is inherited through
    /// fork and exec). libuv learns of job exits through SIGCHLD and of stop requests through
    /// SIGTERM/SIGINT/SIGHUP, so the loop thread unblocks the ones it relies on.
    func unblockSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGCHLD)
        if options.handleSignals {
            for number in Self.handledSignals { sigaddset(&set, number) }
        }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Unblocks and installs the signals refreshd relies on (once), and starts tracking runs'
    /// processes. The daemon calls it before it says it has started, so a SIGTERM sent on that
    /// line is handled, not fatal.
    package func prepareSignals() {
        guard !signalsPrepared else { return }
        signalsPrepared = true
        unblockSignals()
        if options.handleSignals { installSignals() }
        startProcessTracking()
    }

    /// Handlers on the loop (`uv_signal_t`), never `SIG_IGN`: an ignored disposition would be
    /// inherited by every command through exec. (libuv also resets signals 1-31 to their default
    /// in a spawned child before its exec, so even SIGPIPE, ignored here, is default in a job.)
    func installSignals() {
        Glibc.signal(SIGPIPE, SIG_IGN)
        for number in Self.handledSignals {
            let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
            uv_signal_init(loop, handle)
            handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            uv_signal_start(handle, { handle, number in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue().received(signal: number)
            }, number)
            signals.append(handle)
        }
    }

    func received(signal number: Int32) {
        let name = Self.signalName(number)
        switch number {
        case SIGHUP:
            if let hangup = onHangup { hangup() } else { logger.info("received SIGHUP: nothing to reload") }
            return
        case SIGUSR1:
            logger.info("received SIGUSR1: \(statusLine())")
            return
        case SIGTERM, SIGINT:
            // The host only reports it: the runtime decides (graceful first, kill all again).
            runtime.stopSignalReceived(name)
        default:
            logger.info("received \(name): ignored")
        }
    }
}

extension RefreshScheduler {
    static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        case SIGALRM: "SIGALRM"
        case SIGVTALRM: "SIGVTALRM"
        case SIGPROF: "SIGPROF"
        default: "signal \(number)"
        }
    }

    /// What SIGUSR1 logs: runs in flight, pending requests and the next wake-up, on one line.
    func statusLine() -> String {
        let snapshot = runtime.snapshot()
        var parts: [String] = []
        let runs = snapshot.runs.map { "\($0.identifier)[\($0.runID)]" }
        parts.append("\(runs.count) run\(runs.count == 1 ? "" : "s") in flight" + (runs.isEmpty ? "" : " (\(runs.joined(separator: ", ")))"))
        parts.append("\(snapshot.pending.count) pending")
        if let next = snapshot.nextWakeUp { parts.append("next wake-up \(next.iso8601)") }
        if isStopping { parts.append("stopping") }
        return parts.joined(separator: ", ")
    }
}

/// The scheduler stopped because it could not commit its state.
public struct SchedulerFailure: Error, CustomStringConvertible {
    /// What failed (the store's error).
    public var message: String
    /// `state could not be saved: ` and the message.
    public var description: String { "state could not be saved: \(message)" }
}
