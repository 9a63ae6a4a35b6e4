import CLibUV
import Glibc
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime

/// One running command job: its uv_process_t, the pipes carrying its stdout, stderr and results
/// channel (fd 3), and the process group that receives the expiration and the kill.
///
/// The process starts with `UV_PROCESS_DETACHED`, i.e. `setsid()`, so it leads its own process
/// group and every child it forks can be signalled at once with `kill(-pgid, ...)`.
///
/// I/O only: it reports what it reads on the results channel (`onResults`), the channel's close
/// (`onResultsClosed`) and the leader's exit (`onExit`); what is kept, the kill of the group at
/// the exit and how long to wait for the channel are the runtime's decisions
/// (`RefreshRuntime+Results`), carried out through `signalGroup` and `closeResults`.
final class CommandProcess {
    let runID: Int64
    let identifier: String
    private(set) var pid: Int32 = 0
    private let process = UnsafeMutablePointer<uv_process_t>.allocate(capacity: 1)
    /// stdout, stderr, results (fd 3).
    private let pipes = [UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1),
                         UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1),
                         UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)]
    private var splitters = [OutputLineSplitter(), OutputLineSplitter()]
    private var loop: UnsafeMutablePointer<uv_loop_t>?
    private var openHandles = 0
    /// Whether the results channel is still read (until its end, or `closeResults`).
    private(set) var resultsOpen = false
    /// Whether the leader has exited (and was reaped).
    private(set) var hasExited = false
    /// What the leader and the children it waited for used, read from its zombie (`ExitUsage`).
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
    init(runID: Int64, identifier: String, isOverLimit: @escaping () -> Bool,
         onLines: @escaping (String, [String]) -> Void, onSkipped: @escaping (Int, Int) -> Void,
         onResults: @escaping (UnsafeRawBufferPointer) -> Void = { _ in },
         onResultsClosed: @escaping () -> Void = {},
         onExit: @escaping (RunExit) -> Void) {
        self.runID = runID
        self.identifier = identifier
        self.isOverLimit = isOverLimit
        self.onLines = onLines
        self.onSkipped = onSkipped
        self.onResults = onResults
        self.onResultsClosed = onResultsClosed
        self.onExit = onExit
    }

    /// Spawns the command. On failure returns libuv's error text and releases everything.
    func spawn(loop: UnsafeMutablePointer<uv_loop_t>, argv: [String], environment: [String],
               workingDirectory: String?) -> String? {
        self.loop = loop
        let context = Unmanaged.passRetained(self).toOpaque()
        let cArgs = CStringArray(argv)
        let cEnv = CStringArray(environment)
        defer { cArgs.free(); cEnv.free() }
        var stdio = [uv_stdio_container_t](repeating: uv_stdio_container_t(), count: 4)
        stdio[0].flags = UV_IGNORE
        for (i, pipe) in pipes.enumerated() {
            uv_pipe_init(loop, pipe, 0)
            pipe.pointee.data = context
            openHandles += 1
            stdio[i + 1].flags = uv_stdio_flags(UV_CREATE_PIPE.rawValue | UV_WRITABLE_PIPE.rawValue)
            stdio[i + 1].data.stream = UnsafeMutableRawPointer(pipe).assumingMemoryBound(to: uv_stream_t.self)
        }
        var options = uv_process_options_t()
        options.exit_cb = { handle, status, signal in
            guard let handle, let data = handle.pointee.data else { return }
            Unmanaged<CommandProcess>.fromOpaque(data).takeUnretainedValue().exited(status: status, signal: signal)
        }
        options.file = UnsafePointer(cArgs.pointer[0])
        options.args = cArgs.pointer
        options.env = cEnv.pointer
        options.flags = UInt32(UV_PROCESS_DETACHED.rawValue)
        options.stdio_count = 4
        let cwd = workingDirectory.map { strdup($0) } ?? nil
        defer { free(cwd) }
        options.cwd = UnsafePointer(cwd)
        process.pointee.data = context
        openHandles += 1
        let result = stdio.withUnsafeMutableBufferPointer { buffer -> Int32 in
            options.stdio = buffer.baseAddress
            return uv_spawn(loop, process, &options)
        }
        if result != 0 {
            closeAll()
            return String(cString: uv_strerror(result))
        }
        pid = process.pointee.pid
        let spawned = pid
        OrphanReaper.ownChildren.withLock { _ = $0.insert(spawned) }
        ExitUsage.watch(spawned, on: loop)
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

    private func exited(status: Int64, signal: Int32) {
        let reaped = pid  // libuv has waited for it
        OrphanReaper.ownChildren.withLock { _ = $0.remove(reaped) }
        exitUsage = ExitUsage.take(reaped)
        hasExited = true
        close(UnsafeMutableRawPointer(process))
        onExit(signal != 0 ? .signaled(signal) : .exited(Int32(truncatingIfNeeded: status)))
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
        close(UnsafeMutableRawPointer(process))
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
        process.deallocate()
        for pipe in pipes { pipe.deallocate() }
    }
}

/// A NULL-terminated array of C strings that outlives a uv_spawn call.
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
