import CLibUV
import Glibc
import RefreshdCore

/// One running command job: its uv_process_t, the pipes carrying its stdout and stderr, and the
/// process group that receives the expiration (SIGTERM) and the kill (SIGKILL).
///
/// The process starts with `UV_PROCESS_DETACHED`, i.e. `setsid()`, so it leads its own process
/// group and every child it forks can be signalled at once with `kill(-pgid, ...)`. When the
/// leader exits the whole group is killed, so no job process survives its run.
final class CommandProcess {
    let runID: Int64
    let identifier: String
    private(set) var pid: Int32 = 0
    private let process = UnsafeMutablePointer<uv_process_t>.allocate(capacity: 1)
    private let pipes = [UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1),
                         UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)]
    private var splitters = [OutputLineSplitter(), OutputLineSplitter()]
    /// One limit for both streams of the run: what reaches the log per second.
    private var limiter = OutputRateLimiter()
    private var loop: UnsafeMutablePointer<uv_loop_t>?
    private var openHandles = 0
    private let onLine: (String, String) -> Void
    private let onNotice: (String) -> Void
    private let onExit: (RunExit) -> Void

    /// - Parameters:
    ///   - onLine: called with ("stdout" | "stderr", line) for each line of output that fits the
    ///     log's rate limit (`OutputRateLimiter`).
    ///   - onNotice: called with a sentence about output that was not logged.
    ///   - onExit: called once when the leader exits.
    init(runID: Int64, identifier: String, limiter: OutputRateLimiter = OutputRateLimiter(),
         onLine: @escaping (String, String) -> Void, onNotice: @escaping (String) -> Void,
         onExit: @escaping (RunExit) -> Void) {
        self.runID = runID
        self.identifier = identifier
        self.limiter = limiter
        self.onLine = onLine
        self.onNotice = onNotice
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
        var stdio = [uv_stdio_container_t](repeating: uv_stdio_container_t(), count: 3)
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
        options.stdio_count = 3
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

    private func read(stream: UnsafeMutablePointer<uv_stream_t>, count: Int, base: UnsafeMutablePointer<CChar>?) {
        let index = UnsafeMutableRawPointer(stream) == UnsafeMutableRawPointer(pipes[0]) ? 0 : 1
        let name = index == 0 ? "stdout" : "stderr"
        if let loop, let dropped = limiter.advance(to: uv_now(loop)) { reportDropped(dropped) }
        if count > 0, let base {
            let chunk = UnsafeRawBufferPointer(start: base, count: count)
            if limiter.isFull {
                // Over the limit: count and drop without building lines, so a flood costs little.
                var lineEnds = 0
                for byte in chunk where byte == UInt8(ascii: "\n") { lineEnds += 1 }
                limiter.drop(bytes: count, lineEnds: lineEnds)
                splitters[index].reset()
                return
            }
            for line in splitters[index].feed(chunk) where limiter.admit(length: line.utf8.count) {
                onLine(name, line)
            }
        } else if count < 0 {
            if let rest = splitters[index].finish(), limiter.admit(length: rest.utf8.count) { onLine(name, rest) }
            if let dropped = limiter.takeDropped() { reportDropped(dropped) }
            uv_read_stop(stream)
            close(UnsafeMutableRawPointer(stream))
        }
    }

    private func reportDropped(_ dropped: (lines: Int, bytes: Int)) {
        onNotice("\(dropped.lines) line\(dropped.lines == 1 ? "" : "s") (\(dropped.bytes) bytes) of output not logged: "
                 + "over \(limiter.maxLines) lines or \(limiter.maxBytes / 1024) KiB a second")
    }

    private func exited(status: Int64, signal: Int32) {
        // Stragglers the job left behind in its group die with it.
        signalGroup(SIGKILL)
        if let dropped = limiter.takeDropped() { reportDropped(dropped) }
        onExit(signal != 0 ? .signaled(signal) : .exited(Int32(truncatingIfNeeded: status)))
        close(UnsafeMutableRawPointer(process))
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
