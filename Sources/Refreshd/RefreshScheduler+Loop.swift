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
        unblockSignals()
        lock.withLock { startIfNeeded() }
        if options.handleSignals { installSignals() }
        clockWatch?.start()
        drain()
        uv_run(loop, UV_RUN_DEFAULT)
        loopThread = nil
        releaseState()
        if let failure { throw SchedulerFailure(message: failure) }
    }

    /// Executes queued effects in order. Effects may feed new events; those are appended and run
    /// in the same drain, never recursively.
    func drain() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        var batch: [SchedulerEffect] = []
        while true {
            // Swap buffers: the loop runs this batch while events append to the other. The last
            // swap leaves the emptied, grown buffer in `outbox` for the next drain.
            lock.withLock { swap(&batch, &outbox) }
            if batch.isEmpty { return }
            for effect in batch { execute(effect) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// The uv_async callback: another thread queued effects (or a test injected a clock set).
    func woken() {
        if lock.withLock({ () -> Bool in defer { clockSetInjected = false }; return clockSetInjected }) {
            clockWatch?.clockWasSet()
        }
        drain()
        let tasks = lock.withLock { () -> [@Sendable () -> Void] in
            defer { loopTasks.removeAll() }
            return loopTasks
        }
        for task in tasks { task() }
        drain()
    }

    func execute(_ effect: SchedulerEffect) {
        switch effect {
        case let .armTimer(at):
            uv_update_time(loop)
            let delay = max(0, at.duration(since: options.clock.now()).wholeMilliseconds)
            uv_timer_start(timer, { handle in
                guard let data = handle?.pointee.data else { return }
                let scheduler = Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue()
                scheduler.clockWatch?.checkOffset()  // slept or stepped since arming?
                scheduler.send(.timerFired)
            }, UInt64(delay), 0)
        case .disarmTimer:
            uv_timer_stop(timer)
        case let .launch(order):
            launch(order)
        case let .expire(runID):
            if let process = processes[runID] {
                process.signalGroup(SIGTERM)
            } else if let task = lock.withLock({ tasks[runID] }) {
                task.deliverExpiration()
            }
        case let .kill(runID):
            if let process = processes[runID] {
                process.signalGroup(SIGKILL)
            } else if let task = lock.withLock({ tasks.removeValue(forKey: runID) }) {
                task.abandon()
                send(.runFinished(runID: runID, exit: .abandoned))
            }
        case let .watchConditions(on):
            if on { monitor?.start() } else { monitor?.stop() }
        case let .log(event):
            switch event {
            case .rejected, .retriesExhausted: logger.warning("\(event.description)")
            default: logger.info("\(event.description)")
            }
        case .persist:
            break  // committed under the lock in `commit`
        case .stopped:
            logger.info("stopped")
            closeHandles()
        }
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
        for s in signals {
            uv_signal_stop(s)
            uv_close(UnsafeMutableRawPointer(s).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
    }

    /// A process can start with signals blocked (a parent's thread mask is inherited through
    /// fork and exec). libuv learns of job exits through SIGCHLD and of stop requests through
    /// SIGTERM/SIGINT/SIGHUP, so the loop thread unblocks the ones it relies on.
    func unblockSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGCHLD)
        if options.handleSignals {
            for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, number) }
        }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    func installSignals() {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGTERM, SIGINT, SIGHUP] {
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
        let name = number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "SIGHUP"
        if number == SIGHUP {
            if let hangup = onHangup { hangup() } else { logger.info("received SIGHUP: nothing to reload") }
            return
        }
        if !isStopping {
            logger.info("received \(name): stopping gracefully (send it again to kill running jobs now)")
            stop()
        } else {
            logger.warning("received \(name) again: killing running jobs now")
            for process in processes.values { process.signalGroup(SIGKILL) }
            let abandoned = lock.withLock { () -> [Int64] in
                defer { tasks.removeAll() }
                return Array(tasks.keys)
            }
            for runID in abandoned { send(.runFinished(runID: runID, exit: .abandoned)) }
        }
    }
}

/// The scheduler stopped because it could not commit its state.
public struct SchedulerFailure: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "state could not be saved: \(message)" }
}
