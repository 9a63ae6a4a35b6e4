import CLibUV
import Glibc
import Synchronization
@_spi(Benchmarks) import RefreshdCore

/// What a command used, read from its zombie just before libuv waits for it: the accounting of
/// a run without a cgroup (issue 35, item 3's fallback).
///
/// libuv waits for its children with `waitpid` in its SIGCHLD callback (`uv__chld`, the loop's
/// `child_watcher`) and hands the exit callback no rusage. `getrusage(RUSAGE_CHILDREN)` deltas
/// cannot be told apart: libuv waits for every dead child of a pass before calling any exit
/// callback, and the subreaper's orphans, workers, notifiers and the other loops of a cluster
/// node add to the same process-wide sum. So the host puts its own callback in the child
/// watcher's place (again after each `uv_spawn`, which sets libuv's back): it reads each
/// watched command's usage while it is a zombie (`waitid` with `WNOWAIT`, which leaves it for
/// libuv) and then calls libuv's. Exact per command, race-free (the same callback, on the loop
/// thread, before the wait), at one `waitid` per live command per SIGCHLD. What it counts is
/// `wait4`'s CPU time: the command and the descendants it waited for (not those it left
/// behind, which the run's end kills). Not its peak memory: `ru_maxrss` keeps the high-water
/// mark of the pages the child inherited from refreshd at the fork, so a `sleep` forked by a
/// 74 MB process "peaked" at 74 MB. Relies on libuv 1.44's layout (`child_watcher`,
/// `uv__chld` set by each `uv_spawn`), checked by `ExitUsageTests` on the machine's libuv.
enum ExitUsage {
    /// Commands watched, by pid: nil until read dead. And libuv's own callback, once seen.
    private struct Watched {
        var usages: [Int32: RunUsage?] = [:]
        var libuvCallback: uv_signal_cb?
    }
    private static let state = Mutex(Watched())

    /// The child watcher's callback in the host's hands: reads, then lets libuv wait.
    private static let readThenWait: uv_signal_cb = { handle, signal in
        let callback = ExitUsage.readDead()
        callback?(handle, signal)
    }

    /// After a `uv_spawn` of `pid` on `loop`: watches it, and puts the reading callback back in
    /// front of libuv's (`uv_spawn` has just set its own again).
    static func watch(_ pid: Int32, on loop: UnsafeMutablePointer<uv_loop_t>) {
        state.withLock { state in
            state.usages[pid] = .some(nil)
            let current = loop.pointee.child_watcher.signal_cb
            guard let current, !same(current, readThenWait) else { return }
            state.libuvCallback = current
            loop.pointee.child_watcher.signal_cb = readThenWait
        }
    }

    /// The usage read for `pid` (nil if it was not read), forgetting it: in its exit callback.
    static func take(_ pid: Int32) -> RunUsage? {
        state.withLock { $0.usages.removeValue(forKey: pid) ?? nil }
    }

    /// Reads the usage of every watched command that is dead and not read yet; libuv's callback.
    private static func readDead() -> uv_signal_cb? {
        state.withLock { state in
            for (pid, usage) in state.usages where usage == nil {
                var rusage = Glibc.rusage()
                guard refreshd_peek_exit_usage(pid, &rusage) == 0 else { continue }
                let micros = { (time: timeval) in Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_usec) }
                // No peak memory: the kernel's `ru_maxrss` carries the high-water mark of the
                // memory the child had before its exec, a copy of refreshd's (74 MB for a
                // `sleep` forked by a large process): nothing is recorded rather than a wrong figure.
                state.usages[pid] = RunUsage(cpuMicroseconds: micros(rusage.ru_utime) + micros(rusage.ru_stime), peakMemoryBytes: nil)
            }
            return state.libuvCallback
        }
    }

    private static func same(_ a: uv_signal_cb, _ b: uv_signal_cb) -> Bool {
        unsafeBitCast(a, to: UnsafeRawPointer.self) == unsafeBitCast(b, to: UnsafeRawPointer.self)
    }
}
