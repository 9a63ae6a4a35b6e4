import CLibUV
import Glibc
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime
import Synchronization

/// `refreshd simulate --exec`: a job's real command, run to its end through the libuv host's own
/// process code (`CommandProcess`: a session of its own, stdout and stderr pipes, the fd 3
/// results channel, signals to the whole group), on a private loop, while the virtual clock
/// waits. It becomes the modelled process the simulated host runs, so the runtime decides
/// everything as under the daemon and cannot tell the difference:
///
/// - the allowance and the grace run in real time, from the spawn, as the runtime arms them:
///   SIGTERM to the group at the deadline, SIGKILL when the grace is over;
/// - each read of stdout or stderr and each results line is kept with its real offset from the
///   start, and handed to the runtime at that offset in virtual time: its output rate limit,
///   live-line rate and results cap decide there, as for the daemon's reads;
/// - at the leader's exit its whole group is killed (the runtime's order at an exit); a results
///   channel something outside the group holds gets the runtime's 500 ms grace, and is modelled
///   as such a holder, so the runtime decides the end as under the daemon;
/// - the modelled process lasts the measured real time (from the spawn to the exit report) and
///   ends with the real exit. Its end comes after the runtime's expiration (or kill) when the
///   real one got SIGTERM (SIGKILL), so the runtime's outcome matches what really happened.
///
/// When the leader has exited, the run's session and every process whose environment names the
/// run are killed (`OrphanReaper`, as at a daemon's run end). `installStopHandlers` makes a
/// SIGTERM or SIGINT to `simulate` kill the running command's whole group at once.
package enum ExecutedCommand {
    /// Runs one command to its end (see the type). `environment` is what the runtime gave it;
    /// the deadline is `order.deadline`, the kill `grace` after it.
    package static func run(_ order: LaunchOrder, _ job: CommandJob, environment: [String],
                           grace: Duration) -> SimulatedHost.Behaviour {
        guard let program = job.argv.first else { return .init(startFailure: "empty command") }
        if let signal = stopSignal {
            return .init(startFailure: "not started: refreshd simulate received \(RefreshScheduler.signalName(signal))")
        }
        // libuv learns of the exit by SIGCHLD: a thread may have inherited it blocked.
        var childSignal = sigset_t()
        sigemptyset(&childSignal)
        sigaddset(&childSignal, SIGCHLD)
        pthread_sigmask(SIG_UNBLOCK, &childSignal, nil)
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(loop)
        defer {
            uv_loop_close(loop)
            loop.deallocate()
        }
        let execution = Execution(order: order, grace: grace, loop: loop, environment: environment)
        // The execution's timers live until every handle on the loop is closed.
        return withExtendedLifetime(execution) {
            defer { Execution.closeEverything(on: loop) }
            if let error = execution.start(job) { return .init(startFailure: "\(program): \(error)") }
            uv_run(loop, UV_RUN_DEFAULT)
            return execution.behaviour()
        }
    }

    /// Makes SIGTERM and SIGINT stop `simulate --exec` cleanly: the command running then is
    /// killed with its whole group at once (SIGKILL, from the handler), no further command
    /// starts, and `stopSignal` says which signal came, for the caller to stop the simulation.
    /// Also unblocks them and SIGCHLD (libuv learns of exits by it) in the calling thread: a
    /// process may start with them blocked.
    package static func installStopHandlers() {
        // Initialized here, not first inside a handler.
        _ = stopState.load(ordering: .sequentiallyConsistent)
        _ = runningGroup.load(ordering: .sequentiallyConsistent)
        for number in [SIGTERM, SIGINT] {
            _ = Glibc.signal(number) { number in
                stopState.store(number, ordering: .sequentiallyConsistent)
                let group = runningGroup.load(ordering: .sequentiallyConsistent)
                if group > 0 { _ = Glibc.kill(-group, SIGKILL) }
            }
        }
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGTERM, SIGINT, SIGCHLD] { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The stop signal `simulate` received (SIGTERM, SIGINT), if any.
    package static var stopSignal: Int32? {
        let number = stopState.load(ordering: .sequentiallyConsistent)
        return number == 0 ? nil : number
    }
}

/// The stop signal received (0: none) and the process group of the command running now (0:
/// none), read by the signal handler: atomics, which a handler may touch.
private let stopState = Atomic<Int32>(0)
private let runningGroup = Atomic<Int32>(0)

/// One command's run on the private loop: the process, its two timers, what it did and when.
private final class Execution {
    let order: LaunchOrder
    let allowance: Duration
    let grace: Duration
    let loop: UnsafeMutablePointer<uv_loop_t>
    let environment: [String]
    private var process: CommandProcess?
    private var startTicks: UInt64?
    /// The expiration, then the kill.
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    /// Lets the output pipes reach their end after the exit, for a while.
    private let drainTimer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    private let started = uv_hrtime()
    private var expired = false
    private var killed = false
    /// The leader's exit, and when (hrtime).
    private var ended: (exit: RunExit, at: UInt64)?
    /// When the results channel closed after the exit (hrtime); nil while open or never.
    private var resultsClosedAt: UInt64?
    /// The results channel was still held open when the grace after the exit ran out.
    private var heldPastGrace = false
    /// The runtime's output rate limit, mirrored on the same virtual clock, to know which reads
    /// the daemon would drop unsplit (their lines are not kept: a flood costs no memory).
    private var limiter = OutputRateLimiter()
    /// Results bytes not yet a complete line, and how many bytes were kept in all (the
    /// runtime's cap decides; past it nothing more is kept, but one byte over says it overflowed).
    private var partial: [UInt8] = []
    private var resultsKept = 0
    private var output: [SimulatedHost.TimedOutput] = []
    private var live: [SimulatedHost.TimedLine] = []

    /// How long the output pipes may stay open after the exit (something outside the run's
    /// session and environment holds them): then the run is over anyway.
    static let drainLimit: UInt64 = 1000

    init(order: LaunchOrder, grace: Duration, loop: UnsafeMutablePointer<uv_loop_t>, environment: [String]) {
        self.order = order
        self.allowance = max(.zero, order.deadline.duration(since: order.started))
        self.grace = grace
        self.loop = loop
        self.environment = environment
        uv_timer_init(loop, timer)
        uv_timer_init(loop, drainTimer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        drainTimer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        timer.deallocate()
        drainTimer.deallocate()
    }

    /// Real time since the spawn, in whole milliseconds.
    var elapsed: Int64 { Int64((uv_hrtime() - started) / 1_000_000) }

    /// The virtual instant (milliseconds) the runtime will see for something happening now.
    var virtualNow: Int64 { order.started.milliseconds + elapsed }

    /// Spawns the command and arms the expiration; libuv's error text if it cannot start.
    func start(_ job: CommandJob) -> String? {
        let process = CommandProcess(
            runID: order.runID, identifier: order.identifier,
            isOverLimit: { [unowned self] in
                _ = limiter.advance(to: UInt64(max(0, virtualNow)))
                return limiter.isFull
            },
            onLines: { [unowned self] stream, lines in
                guard !lines.isEmpty else { return }
                _ = limiter.advance(to: UInt64(max(0, virtualNow)))
                for line in lines { _ = limiter.admit(length: line.utf8.count) }
                output.append(.init(offset: .milliseconds(elapsed), read: .lines(stream: stream, lines)))
            },
            onSkipped: { [unowned self] bytes, lineEnds in
                limiter.drop(bytes: bytes, lineEnds: lineEnds)
                output.append(.init(offset: .milliseconds(elapsed), read: .skipped(bytes: bytes, lineEnds: lineEnds)))
            },
            onResults: { [unowned self] chunk in read(chunk) },
            onResultsClosed: { [unowned self] in resultsClosed() },
            onExit: { [unowned self] exit in leaderExited(exit) })
        if let error = process.spawn(loop: loop, argv: job.argv, environment: environment,
                                     workingDirectory: job.workingDirectory) {
            return error
        }
        self.process = process
        startTicks = OrphanReaper.stat(pid: process.pid)?.startTicks
        runningGroup.store(process.pid, ordering: .sequentiallyConsistent)
        // A stop signal that came before the group was known: it dies now.
        if ExecutedCommand.stopSignal != nil { process.signalGroup(SIGKILL) }
        arm(after: allowance) { me in
            me.expired = true
            me.process?.signalGroup(SIGTERM)
            me.arm(after: me.grace) { me in
                me.killed = true
                me.process?.signalGroup(SIGKILL)
            }
        }
        return nil
    }

    private var fire: ((Execution) -> Void)?

    private func arm(after delay: Duration, _ body: @escaping (Execution) -> Void) {
        fire = body
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let me = Unmanaged<Execution>.fromOpaque(data).takeUnretainedValue()
            let body = me.fire
            me.fire = nil
            body?(me)
        }, UInt64(max(0, delay.wholeMilliseconds)), 0)
    }

    /// Results bytes as read: each complete line is kept with its offset, and handed to the
    /// runtime at that offset in virtual time (`runResultsRead`), where the results rules decide
    /// (live lines, the cap and its marker). Past the cap nothing more is kept.
    private func read(_ chunk: UnsafeRawBufferPointer) {
        let room = ResultsChannels.capacity + 1 - resultsKept
        guard room > 0 else { return }
        let taken = chunk.prefix(room)
        resultsKept += taken.count
        partial.append(contentsOf: taken)
        let newline = UInt8(ascii: "\n")
        while let end = partial.firstIndex(of: newline) {
            live.append(.init(offset: .milliseconds(elapsed), line: String(decoding: partial[..<end], as: UTF8.self)))
            partial.removeSubrange(...end)
        }
    }

    /// The leader exited: as the runtime orders at a leader's exit, its whole group dies now;
    /// then the results channel gets the runtime's grace to close (something outside the group
    /// may hold it), and the run is over.
    private func leaderExited(_ exit: RunExit) {
        ended = (exit, uv_hrtime())
        fire = nil
        uv_timer_stop(timer)
        runningGroup.store(0, ordering: .sequentiallyConsistent)
        process?.signalGroup(SIGKILL)
        guard process?.resultsOpen == true else {
            finish()
            return
        }
        arm(after: ResultsChannels.grace) { me in
            me.heldPastGrace = true
            me.process?.closeResults()
            me.finish()
        }
    }

    private func resultsClosed() {
        guard ended != nil else { return }  // before the exit: nothing to decide yet
        resultsClosedAt = uv_hrtime()
        fire = nil
        uv_timer_stop(timer)
        finish()
    }

    /// The run is over: what is left of it dies, and the output pipes get a moment to reach
    /// their end.
    private func finish() {
        if !partial.isEmpty {
            live.append(.init(offset: .milliseconds(elapsed), line: String(decoding: partial, as: UTF8.self)))
            partial.removeAll()
        }
        if let process {
            let run = RunRecord(runID: order.runID, identifier: order.identifier, kind: order.kind,
                                submitted: order.started, earliest: order.started, started: order.started,
                                deadline: order.deadline, attempt: order.attempt,
                                processGroup: process.pid, processStartTicks: startTicks)
            _ = OrphanReaper.reap([run], instance: Self.instance(in: environment), quietGroups: [process.pid])
        }
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
        uv_timer_start(drainTimer, { handle in
            guard let handle else { return }
            uv_stop(handle.pointee.loop)
        }, Self.drainLimit, 0)
        uv_unref(UnsafeMutableRawPointer(drainTimer).assumingMemoryBound(to: uv_handle_t.self))
    }

    static func instance(in environment: [String]) -> String {
        let prefix = "REFRESH_INSTANCE="
        return environment.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) } ?? ""
    }

    /// The modelled process: the measured duration and exit, the reads and live lines at their
    /// offsets (none after the instant the runtime will end it).
    func behaviour() -> SimulatedHost.Behaviour {
        guard let ended else {
            // The loop stopped before the exit: cannot happen; a killed run is the safe answer.
            return .init(duration: .milliseconds(elapsed), exit: .signaled(SIGKILL), ignoresTerminate: true)
        }
        let nanoseconds = ended.at - started
        var duration = Duration.milliseconds(Int64((nanoseconds + 999_999) / 1_000_000))
        // The runtime expires (kills) the model at the same offsets; the end comes after it.
        if expired { duration = max(duration, allowance + .milliseconds(1)) }
        let killAt: Duration? = killed ? allowance + grace : nil
        if let killAt { duration = max(duration, killAt + .milliseconds(1)) }
        let last = killAt ?? duration
        // A results channel held open after the exit: the runtime's grace decides the end.
        var holder: SimulatedHost.ResultsHolder?
        if heldPastGrace {
            holder = .never
        } else if let closed = resultsClosedAt {
            holder = .closesAfter(.milliseconds(Int64((closed - ended.at) / 1_000_000)))
        }
        return .init(duration: duration, exit: ended.exit, ignoresTerminate: true,
                     timedResults: live.map { .init(offset: min($0.offset, last), line: $0.line) },
                     resultsHolder: holder,
                     timedOutput: output.map { .init(offset: min($0.offset, last), read: $0.read) })
    }

    /// Closes whatever is still open on the loop (an output pipe something outside the run
    /// still holds, at the drain limit) and lets the closes complete, so the loop can close.
    static func closeEverything(on loop: UnsafeMutablePointer<uv_loop_t>) {
        uv_walk(loop, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            // A pipe of the command: CommandProcess then keeps its memory (it is not released).
            uv_close(handle, nil)
        }, nil)
        uv_run(loop, UV_RUN_DEFAULT)
    }
}
