import CLibUV
import Glibc

/// One client of the control socket, on the loop thread: its pipe, the bytes of a line not yet
/// complete, and the bytes written but not yet taken by the client.
///
/// Bounded both ways: a line longer than `maxLineBytes` is answered `line-too-long` and the
/// connection closed; a client that does not read (more than `maxQueuedBytes` waiting for it) is
/// closed, so a slow reader costs the loop neither memory nor time. Writes never block: what the
/// socket does not take at once is queued by libuv (`uv_write`) and counted here.
final class ControlConnection: @unchecked Sendable {  // loop thread only; sent there back from the status queue
    let pipe = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    let number: Int
    var pending: [UInt8] = []
    var queuedBytes = 0
    var subscribed = false
    /// Reading from the socket (paused while complete lines wait for a later turn).
    var reading = false
    /// A status report is being read off the loop: later lines wait for its reply.
    var statusInFlight = false
    /// Replies in the order of their requests, some still to come (a cluster node's commands,
    /// answered once their leaders applied them): each is written when it and every one before
    /// it are ready, so a client may send its next lines meanwhile (`ControlServer.send`).
    var awaiting: [ReplySlot] = []
    /// The most replies a client may wait for at once; past it, its next lines wait.
    static let maxAwaiting = 64
    /// Later lines wait: for a status report, or for the replies already awaited.
    var busy: Bool {
        get { statusInFlight || awaiting.count >= Self.maxAwaiting }
        set { statusInFlight = newValue }
    }
    /// Closing (or shutting down after a last reply): nothing more is read or written.
    var closing = false
    var peer: PeerCredentials?
    weak var server: ControlServer?

    init(number: Int, server: ControlServer) {
        self.number = number
        self.server = server
        pipe.pointee.data = nil
    }

    var stream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(pipe).assumingMemoryBound(to: uv_stream_t.self)
    }

    var fileDescriptor: Int32 {
        var fd: uv_os_fd_t = -1
        let handle = UnsafeMutableRawPointer(pipe).assumingMemoryBound(to: uv_handle_t.self)
        return uv_fileno(handle, &fd) == 0 ? fd : -1
    }

    /// Writes `bytes` (one or more whole lines). False when the client is gone or too slow: the
    /// caller closes it.
    func write(_ bytes: [UInt8], maxQueued: Int) -> Bool {
        guard !closing else { return false }
        var offset = 0
        if queuedBytes == 0 {
            // Most replies fit the socket buffer: no allocation, no callback.
            let written = bytes.withUnsafeBufferPointer { buffer -> Int32 in
                var buf = uv_buf_init(UnsafeMutableRawPointer(mutating: buffer.baseAddress!)
                    .assumingMemoryBound(to: CChar.self), UInt32(buffer.count))
                return uv_try_write(stream, &buf, 1)
            }
            if written > 0 { offset = Int(written) } else if written != Int32(UV_EAGAIN.rawValue), written < 0 { return false }
            if offset == bytes.count { return true }
        }
        let rest = bytes.count - offset
        guard queuedBytes + rest <= maxQueued else { return false }
        // One allocation holds the request and the bytes; freed in the callback.
        let size = MemoryLayout<uv_write_t>.stride + rest
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<uv_write_t>.alignment)
        let request = raw.assumingMemoryBound(to: uv_write_t.self)
        let data = raw + MemoryLayout<uv_write_t>.stride
        bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress! + offset, byteCount: rest) }
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        var buf = uv_buf_init(data.assumingMemoryBound(to: CChar.self), UInt32(rest))
        queuedBytes += rest
        let rc = uv_write(request, stream, &buf, 1) { request, status in
            guard let request else { return }
            let raw = UnsafeMutableRawPointer(request)
            if let data = request.pointee.data {
                let connection = Unmanaged<ControlConnection>.fromOpaque(data).takeUnretainedValue()
                connection.written(status: status)
            }
            raw.deallocate()
        }
        if rc != 0 {
            queuedBytes -= rest
            raw.deallocate()
            return false
        }
        queuedBytes = Int(uv_stream_get_write_queue_size(stream))
        return true
    }

    private func written(status: Int32) {
        // What is still queued, as libuv counts it (exact, and cheap).
        queuedBytes = Int(uv_stream_get_write_queue_size(stream))
        if status < 0, status != Int32(UV_ECANCELED.rawValue) { server?.close(self) }
    }
}

/// A reply's place in a client's order (loop thread): empty until its answer comes.
final class ReplySlot: @unchecked Sendable {  // loop thread only
    var bytes: [UInt8]?
}
