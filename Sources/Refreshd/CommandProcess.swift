import CLibUV
import Glibc
import RefreshdCore
import RefreshdRuntime

/// One running command job: its process, the pipes carrying its stdout, stderr and results
/// channel (fd 3), and the process group that receives the expiration and the kill.
///
/// The process is started as glibc's `posix_spawn` starts one (`refreshd_spawn`: `CLONE_VM|CLONE_VFORK`,
/// no copy of refreshd's page tables, where libuv's `uv_spawn` forked), born in its run's cgroup
/// when it has one (clone3's `CLONE_INTO_CGROUP`), in a session of its own
/// (`setsid()`), so it leads its own process group and every child it forks can be signalled at
/// once with `kill(-pgid, ...)`. Its exit is learnt by SIGCHLD (the scheduler's `ChildWatch`,
/// shared by every command of its loop, or a `uv_signal_t` of its own on a loop without one)
/// and waited for by pid with `wait4`, whose rusage is what it used.
///
/// I/O only: it reports what it reads on the results channel (`onResults`), the channel's close
/// (`onResultsClosed`) and the leader's exit (`onExit`); what is kept, the kill of the group at
/// the exit and how long to wait for the channel are the runtime's decisions
/// (`RefreshRuntime+Results`), carried out through `signalGroup` and `closeResults`.
final class CommandProcess {
    let runID: Int64
    let identifier: String
    private(set) var pid: Int32 = 0
    /// The loop's shared SIGCHLD watcher, if it has one.
    private let watch: ChildWatch?
    /// Without one: SIGCHLD, watched from before the spawn until the leader is waited for.
    private let childSignal = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
    /// stdout, stderr, results (fd 3).
    private let pipes = [UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1),
                         UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1),
                         UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)]
    private var splitters = [OutputLineSplitter(), OutputLineSplitter()]
    private var loop: UnsafeMutablePointer<uv_loop_t>?
    private var openHandles = 0
    /// Whether the results channel is still read (until its end, or `closeResults`).
    private(set) var resultsOpen = false
    /// Whether the command was born in the cgroup `spawn` was given.
    private(set) var bornInCgroup = false
    /// Whether the leader has exited (and was reaped).
    private(set) var hasExited = false
    /// What the leader and the children it waited for used (`wait4`'s rusage): CPU time only.
    /// Not its peak memory: `ru_maxrss` keeps the high-water mark of the memory the process
    /// had before its exec, refreshd's own (a `sleep` started by a 74 MB process "peaked" at
    /// 74 MB), so nothing is recorded rather than a wrong figure.
    private(set) var exitUsage: RunUsage?
    /// The runtime decides what output is logged (`RefreshRuntime.runOutputLines`): the host
    /// reports what it read, and asks first whether the window is full, to skip splitting.
    private let isOverLimit: () -> Bool
    private let onLines: (String, [String]) -> Void
    private let onSkipped: (_ bytes: Int, _ lineEnds: Int) -> Void
    private let onResults: (UnsafeRawBufferPointer) -> Void
    private let onResultsClosed: () -> Void
    private let onExit: (RunExit) -> Void

    /// - Parameters:
    ///   - isOverLimit: whether the run's output window is full (the runtime's rate limit).
    ///   - onLines: called with ("stdout" | "stderr", lines) for the complete lines of a read.
    ///   - onSkipped: called with (bytes, line ends) for a read dropped unsplit (window full).
    ///   - onResults: called with each chunk read on the results channel.
    ///   - onResultsClosed: called once when every writer closed the results channel (not after
    ///     `closeResults`).
    ///   - onExit: called once when the leader has exited (reaped); its group may live on.
    ///   - watch: the loop's shared SIGCHLD watcher (nil: one of its own).
    init(runID: Int64, identifier: String, watch: ChildWatch? = nil, isOverLimit: @escaping () -> Bool,
         onLines: @escaping (String, [String]) -> Void, onSkipped: @escaping (Int, Int) -> Void,
         onResults: @escaping (UnsafeRawBufferPointer) -> Void = { _ in },
         onResultsClosed: @escaping () -> Void = {},
         onExit: @escaping (RunExit) -> Void) {
        self.runID = runID
        self.identifier = identifier
        self.watch = watch
        self.isOverLimit = isOverLimit
        self.onLines = onLines
        self.onSkipped = onSkipped
        self.onResults = onResults
        self.onResultsClosed = onResultsClosed
        self.onExit = onExit
    }

    /// Spawns the command, in the cgroup whose directory `cgroup` is open on (if not -1; whether
    /// it was born there is `bornInCgroup`). On failure returns the error's text (libuv's words,
    /// as `uv_spawn` gave them) and releases everything.
    func spawn(loop: UnsafeMutablePointer<uv_loop_t>, argv: [String], environment: [String],
               workingDirectory: String?, cgroup: Int32 = -1) -> String? {
        self.loop = loop
        guard let file = argv.first else { return String(cString: uv_strerror(-EINVAL)) }
        let context = Unmanaged.passRetained(self).toOpaque()
        // Every handle is set up first, so that a failure closes what exists.
        for pipe in pipes {
            uv_pipe_init(loop, pipe, 0)
            pipe.pointee.data = context
        }
        openHandles += pipes.count
        if watch == nil {
            uv_signal_init(loop, childSignal)
            childSignal.pointee.data = context
            openHandles += 1
            // Watched before the spawn: a SIGCHLD before the watch would be lost. (A shared
            // watch already runs; it handles a SIGCHLD on the loop, after `add` below.)
            uv_signal_start(childSignal, { handle, _ in
                guard let handle, let data = handle.pointee.data else { return }
                Unmanaged<CommandProcess>.fromOpaque(data).takeUnretainedValue().reap()
            }, SIGCHLD)
        }
        // The child's ends (its fds 1, 2, 3), closed here after the spawn; refreshd's read ends go to libuv.
        var childEnds: [Int32] = []
        defer { for fd in childEnds { _ = Glibc.close(fd) } }
        for pipe in pipes {
            var ends: [Int32] = [-1, -1]
            guard refreshd_pipe(&ends) == 0 else { return failed(errno) }
            childEnds.append(ends[1])
            guard uv_pipe_open(pipe, ends[0]) == 0 else {
                _ = Glibc.close(ends[0])
                return failed(EMFILE)
            }
        }
        let path: String
        switch Self.resolve(file, environment: environment, workingDirectory: workingDirectory) {
        case let .found(found): path = found
        case let .missing(error): return failed(error)
        }
        let cArgs = CStringArray(argv)
        let cEnv = CStringArray(environment)
        defer { cArgs.free(); cEnv.free() }
        var spawned: Int32 = 0, inCgroup: Int32 = 0
        // Spawned and known as refreshd's own under one lock: the sweep's orphan rule (another
        // thread) checks under it before a kill, so a child it listed while the spawn ran (not
        // yet known, with refreshd's environment until its exec) is never taken for an orphan.
        let result = OrphanReaper.ownChildren.withLock { own -> Int32 in
            let result = refreshd_spawn(&spawned, path, cArgs.pointer, cEnv.pointer, workingDirectory,
                                        childEnds[0], childEnds[1], childEnds[2], cgroup, &inCgroup)
            if result == 0 { own.insert(spawned) }
            return result
        }
        guard result == 0 else { return failed(result) }
        pid = spawned
        bornInCgroup = inCgroup != 0
        watch?.add(self)
        resultsOpen = true
        for pipe in pipes {
            uv_read_start(UnsafeMutableRawPointer(pipe).assumingMemoryBound(to: uv_stream_t.self),
                          { _, suggested, buf in
                              buf?.pointee = uv_buf_init(malloc(suggested)?.assumingMemoryBound(to: CChar.self),
                                                         UInt32(suggested))
                          },
                          { stream, count, buf in
                              defer { free(buf?.pointee.base) }
                              guard let stream, let data = stream.pointee.data else { return }
                              let me = Unmanaged<CommandProcess>.fromOpaque(data).takeUnretainedValue()
                              me.read(stream: stream, count: count, base: buf?.pointee.base)
                          })
        }
        return nil
    }

    /// Releases what `spawn` opened; libuv's text for `error` (an errno value).
    private func failed(_ error: Int32) -> String {
        closeAll()
        return String(cString: uv_strerror(-error))
    }

    /// The program execvp would run for `file`: itself if it names a path (a `/` in it), else
    /// the first executable file of that name in the command's PATH (`/bin:/usr/bin` without
    /// one), relative PATH entries from the working directory. ENOENT, or EACCES if one was
    /// found that may not be executed.
    static func resolve(_ file: String, environment: [String], workingDirectory: String?) -> Resolved {
        guard !file.isEmpty else { return .missing(ENOENT) }
        // Its bytes, not `String.contains`, which took about 2% of refreshd's samples a launch.
        if file.utf8.contains(UInt8(ascii: "/")) { return .found(file) }
        let path = environment.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/bin:/usr/bin"
        var denied = false
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + file
            let checked = candidate.hasPrefix("/") ? candidate : (workingDirectory ?? ".") + "/" + candidate
            var info = stat()
            guard stat(checked, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { continue }
            if access(checked, X_OK) == 0 { return .found(candidate) }
            denied = true
        }
        return .missing(denied ? EACCES : ENOENT)
    }

    enum Resolved: Equatable {
        case found(String)
        /// An errno value.
        case missing(Int32)
    }

    /// Sends a signal to the whole process group.
    func signalGroup(_ signal: Int32) {
        guard pid > 0 else { return }
        _ = Glibc.kill(-pid, signal)
    }

    private func index(of stream: UnsafeMutablePointer<uv_stream_t>) -> Int {
        pipes.firstIndex { UnsafeMutableRawPointer($0) == UnsafeMutableRawPointer(stream) } ?? 0
    }

    private func read(stream: UnsafeMutablePointer<uv_stream_t>, count: Int, base: UnsafeMutablePointer<CChar>?) {
        let index = index(of: stream)
        if index == 2 {
            readResults(stream: stream, count: count, base: base)
            return
        }
        let name = index == 0 ? "stdout" : "stderr"
        if count > 0, let base {
            let chunk = UnsafeRawBufferPointer(start: base, count: count)
            if isOverLimit() {
                // Over the limit: count and drop without building lines, so a flood costs little.
                var lineEnds = 0
                for byte in chunk where byte == UInt8(ascii: "\n") { lineEnds += 1 }
                onSkipped(count, lineEnds)
                splitters[index].reset()
                return
            }
            onLines(name, splitters[index].feed(chunk))
        } else if count < 0 {
            if let rest = splitters[index].finish() { onLines(name, [rest]) }
            uv_read_stop(stream)
            close(UnsafeMutableRawPointer(stream))
        }
    }

    private func readResults(stream: UnsafeMutablePointer<uv_stream_t>, count: Int, base: UnsafeMutablePointer<CChar>?) {
        if count > 0, let base {
            onResults(UnsafeRawBufferPointer(start: base, count: count))
        } else if count < 0 {
            guard resultsOpen else { return }
            resultsOpen = false
            uv_read_stop(stream)
            close(UnsafeMutableRawPointer(stream))
            onResultsClosed()
        }
    }

    /// SIGCHLD (of any child): waits for the leader if it has exited.
    func reap() {
        guard pid > 0, !hasExited else { return }
        var status: Int32 = 0, signal: Int32 = 0
        var usage = rusage()
        guard refreshd_reap(pid, &status, &signal, &usage) == 1 else { return }
        let reaped = pid
        OrphanReaper.ownChildren.withLock { _ = $0.remove(reaped) }
        let micros = { (time: timeval) in Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_usec) }
        exitUsage = RunUsage(cpuMicroseconds: micros(usage.ru_utime) + micros(usage.ru_stime), peakMemoryBytes: nil)
        hasExited = true
        if let watch {
            watch.remove(reaped)
        } else {
            uv_signal_stop(childSignal)
            close(UnsafeMutableRawPointer(childSignal))
        }
        onExit(signal != 0 ? .signaled(signal) : .exited(status))
    }

    /// Stops reading the results channel and closes refreshd's end (the runtime's grace after
    /// the exit is over: something outside the group still holds it).
    func closeResults() {
        guard resultsOpen else { return }
        resultsOpen = false
        let stream = UnsafeMutableRawPointer(pipes[2]).assumingMemoryBound(to: uv_stream_t.self)
        uv_read_stop(stream)
        close(UnsafeMutableRawPointer(pipes[2]))
    }

    private func closeAll() {
        if watch == nil { close(UnsafeMutableRawPointer(childSignal)) }
        for pipe in pipes { close(UnsafeMutableRawPointer(pipe)) }
    }

    private func close(_ raw: UnsafeMutableRawPointer) {
        let handle = raw.assumingMemoryBound(to: uv_handle_t.self)
        guard uv_is_closing(handle) == 0 else { return }
        uv_close(handle) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let unmanaged = Unmanaged<CommandProcess>.fromOpaque(data)
            let me = unmanaged.takeUnretainedValue()
            me.openHandles -= 1
            if me.openHandles == 0 { unmanaged.release() }
        }
    }

    deinit {
        childSignal.deallocate()
        for pipe in pipes { pipe.deallocate() }
    }
}

/// A NULL-terminated array of C strings for a spawn.
struct CStringArray {
    let pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointer = .allocate(capacity: strings.count + 1)
        for (i, s) in strings.enumerated() { pointer[i] = strdup(s) }
        pointer[strings.count] = nil
    }

    func free() {
        for i in 0..<count { Glibc.free(pointer[i]) }
        pointer.deallocate()
    }
}
