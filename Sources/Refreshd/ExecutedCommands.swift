import CLibUV
import Glibc
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// `refreshd simulate --exec`'s real commands (`RealCommands`): each runs through the libuv host's
/// own process code (`CommandProcess`: a session of its own, stdout and stderr pipes, the fd 3
/// results channel, signals to the whole group) on one private loop, and reports what really
/// happens to the simulated host, which hands it to the runtime at its instant: each read of
/// output (through the runtime's rate limit, asked first as the daemon asks), each read of fd 3,
/// the channel's close, the leader's exit. The runtime decides everything from there, once:
/// its expiration (SIGTERM to the group), its kill after the grace, the group's kill at the
/// leader's exit, the wait for a held fd 3, the results cap. This type only carries those
/// orders out; its one timer is the host's (`wait(until:)`: the next instant the simulation
/// has something to do, waited for in real time).
///
/// `installStopHandlers` makes a SIGTERM or SIGINT to `simulate` kill every running command's
/// group at once; `finish` kills what is left when the simulation is over.
package final class ExecutedCommands: RealCommands {
    private let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    /// The host's one timer: the instant `wait(until:)` waits for.
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    /// Woken by a stop signal's handler (`uv_async_send` is async-signal-safe).
    private let stopWake = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
    /// The runs whose leader is alive or whose results channel is still read, with what their
    /// sweep needs.
    private var runs: [Int64: (process: CommandProcess, record: RunRecord, instance: String)] = [:]
    /// While commands run, virtual time runs with real time from here: a virtual instant and
    /// `uv_hrtime` then (set at the first spawn, dropped when none runs).
    private var anchor: (virtual: Instant, real: UInt64)?
    /// Set when a command reports an event, or the timer fires, during `wait`.
    private var reported = false
    private var due = false
    private var finished = false

    package init() {
        uv_loop_init(loop)
        uv_timer_init(loop, timer)
        uv_async_init(loop, stopWake) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<ExecutedCommands>.fromOpaque(data).takeUnretainedValue().killAll()
        }
        uv_unref(UnsafeMutableRawPointer(stopWake).assumingMemoryBound(to: uv_handle_t.self))
        let me = Unmanaged.passUnretained(self).toOpaque()
        timer.pointee.data = me
        stopWake.pointee.data = me
        wakeOnStop.store(UInt(bitPattern: stopWake), ordering: .sequentiallyConsistent)
    }

    deinit {
        finish()
        uv_loop_close(loop)
        loop.deallocate()
        timer.deallocate()
        stopWake.deallocate()
    }

    package var virtualNow: Instant? {
        anchor.map { Instant(milliseconds: $0.virtual.milliseconds + Int64((uv_hrtime() - $0.real) / 1_000_000)) }
    }

    package func start(_ order: LaunchOrder, _ job: CommandJob, environment: [String], instance: String,
                       host: any RealCommandsHost) -> CommandStart {
        guard let program = job.argv.first else { return .failed("empty command") }
        if let signal = Self.stopSignal {
            return .failed("not started: refreshd simulate received \(RefreshScheduler.signalName(signal))")
        }
        // libuv learns of the exit by SIGCHLD: a thread may have inherited it blocked.
        var childSignal = sigset_t()
        sigemptyset(&childSignal)
        sigaddset(&childSignal, SIGCHLD)
        pthread_sigmask(SIG_UNBLOCK, &childSignal, nil)
        let runID = order.runID
        // Each event goes to the host at once (not after `finish`), which hands it to the runtime.
        let report: ((RefreshRuntime) -> Void) -> Void = { [weak self, weak host] body in
            guard let self, !self.finished else { return }
            self.reported = true
            _ = host?.reportReal(instance: instance, body)
        }
        let process = CommandProcess(
            runID: runID, identifier: order.identifier,
            isOverLimit: { [weak host] in host?.reportReal(instance: instance) { $0.runOutputIsOverLimit(order) } ?? false },
            onLines: { stream, lines in report { $0.runOutputLines(order, stream: stream, lines: lines) } },
            onSkipped: { bytes, lineEnds in report { $0.runOutputSkipped(order, bytes: bytes, lineEnds: lineEnds) } },
            onResults: { chunk in report { $0.runResultsRead(order, chunk) } },
            onResultsClosed: { [weak self] in
                report { $0.runResultsClosed(runID) }
                self?.forgetIfDone(runID)
            },
            onExit: { [weak self] exit in
                report { $0.runLeaderExited(runID, exit: exit) }
                self?.forgetIfDone(runID)
            })
        // Virtual time begins to run before the spawn, not after it: a spawn and the read of its
        // start ticks take milliseconds under load, and the command's time runs from its exec
        // (taken after, a 2 s sleep was once measured 1.997 s).
        let spawning = uv_hrtime()
        if let error = process.spawn(loop: loop, argv: job.argv, environment: environment,
                                     workingDirectory: job.workingDirectory) {
            return .failed("\(program): \(error)")
        }
        let startTicks = OrphanReaper.stat(pid: process.pid)?.startTicks
        let record = RunRecord(runID: runID, identifier: order.identifier, kind: order.kind,
                               submitted: order.started, earliest: order.started, started: order.started,
                               deadline: order.deadline, attempt: order.attempt,
                               processGroup: process.pid, processStartTicks: startTicks)
        runs[runID] = (process, record, instance)
        if anchor == nil { anchor = (host.clock, spawning) }
        // A stop signal that came while it was spawned: it dies now.
        if Self.stopSignal != nil { process.signalGroup(SIGKILL) }
        return .started(processGroup: process.pid, startTicks: startTicks)
    }

    package func signal(runID: Int64, _ signal: RunSignal) {
        runs[runID]?.process.signalGroup(signal == .terminate ? SIGTERM : SIGKILL)
    }

    package func killGroup(runID: Int64) { runs[runID]?.process.signalGroup(SIGKILL) }

    package func closeResults(runID: Int64) {
        runs[runID]?.process.closeResults()
        forgetIfDone(runID)
    }

    package func sweep(_ run: RunRecord, instance: String) -> [Int32] {
        OrphanReaper.reap([run], instance: instance, quietGroups: run.processGroup.map { Set([$0]) } ?? []).first?.1 ?? []
    }

    package func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] {
        OrphanReaper.reap(runs, instance: instance)
    }

    package func shift(by delta: Duration) {
        if let anchor { self.anchor = (anchor.virtual + delta, anchor.real) }
    }

    package func wait(until instant: Instant?, from clock: Instant) -> Bool {
        guard !runs.isEmpty, var now = virtualNow else { return false }
        // The clock moved on without real time passing (a downtime, a pause): so do the commands.
        if clock > now {
            shift(by: clock.duration(since: now))
            now = clock
        }
        reported = false
        due = false
        if let instant {
            let delay = instant.milliseconds - now.milliseconds
            guard delay > 0 else { return false }
            uv_update_time(loop)
            uv_timer_start(timer, { handle in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<ExecutedCommands>.fromOpaque(data).takeUnretainedValue().due = true
            }, UInt64(delay), 0)
        }
        while !reported, !due, uv_run(loop, UV_RUN_ONCE) != 0 {}
        uv_timer_stop(timer)
        return reported
    }

    /// Drops a run once its leader has exited and its results channel is closed; with none
    /// left, virtual time stops running with real time.
    private func forgetIfDone(_ runID: Int64) {
        if let run = runs[runID], run.process.hasExited, !run.process.resultsOpen { runs[runID] = nil }
        if runs.isEmpty { anchor = nil }
    }

    /// SIGKILL to every running command's group (a stop signal came).
    private func killAll() {
        for run in runs.values { run.process.signalGroup(SIGKILL) }
    }

    /// The simulation is over (or stopped): every command still running is killed with its
    /// group and waited for, what the runs left is swept, and the loop's handles are closed.
    package func finish() {
        guard !finished else { return }
        finished = true
        _ = wakeOnStop.compareExchange(expected: UInt(bitPattern: stopWake), desired: 0, ordering: .sequentiallyConsistent)
        let left = Array(runs.values)
        killAll()
        // Their exits are no longer reported (`finished`).
        runs = [:]
        anchor = nil
        while left.contains(where: { !$0.process.hasExited }), uv_run(loop, UV_RUN_ONCE) != 0 {}
        for run in left { _ = OrphanReaper.reap([run.record], instance: run.instance, quietGroups: [run.record.processGroup ?? 0]) }
        uv_walk(loop, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            // A pipe of a command: CommandProcess then keeps its memory (it is not released).
            uv_close(handle, nil)
        }, nil)
        uv_run(loop, UV_RUN_DEFAULT)
    }

    /// Makes SIGTERM and SIGINT stop `simulate --exec` cleanly: every command running then is
    /// killed with its whole group at once (SIGKILL, from the loop the handler wakes), no
    /// further command starts, and `stopSignal` says which signal came, for the caller to stop
    /// the simulation. Also unblocks them and SIGCHLD (libuv learns of exits by it) in the
    /// calling thread: a process may start with them blocked.
    package static func installStopHandlers() {
        // Initialized here, not first inside a handler.
        _ = stopState.load(ordering: .sequentiallyConsistent)
        _ = wakeOnStop.load(ordering: .sequentiallyConsistent)
        for number in [SIGTERM, SIGINT] {
            _ = Glibc.signal(number) { number in
                stopState.store(number, ordering: .sequentiallyConsistent)
                let bits = wakeOnStop.load(ordering: .sequentiallyConsistent)
                if let wake = UnsafeMutablePointer<uv_async_t>(bitPattern: bits) { _ = uv_async_send(wake) }
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

/// The stop signal received (0: none) and the wake-up of the commands' loop (0: none), read by
/// the signal handler: atomics, which a handler may touch.
private let stopState = Atomic<Int32>(0)
private let wakeOnStop = Atomic<UInt>(0)
