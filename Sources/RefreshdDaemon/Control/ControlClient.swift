import CLibUV  // its headers carry the socket type constants (bits/socket_type.h) into scope
import Foundation
import Glibc
import RefreshdRuntime

/// A blocking client of the control socket, for the command line and tests: connect, send a
/// request line, read reply lines (and, after `subscribe`, pushed events).
package final class ControlClient {
    /// Why there is no conversation.
    package enum Failure: Error, CustomStringConvertible {
        /// No refreshd serves this state directory (no socket, or nobody listening on it).
        case notRunning(path: String, reason: String)
        /// The socket is there but could not be used (permission, a path too long, ...).
        case unusable(path: String, reason: String)
        /// The connection ended or a line could not be read as a reply.
        case broken(String)
        /// Nothing came within the read timeout.
        case timedOut

        package var description: String {
            switch self {
            case let .notRunning(path, reason): "refreshd is not running on \(path) (\(reason))"
            case let .unusable(path, reason): "cannot use the control socket \(path): \(reason)"
            case let .broken(reason): "control connection failed: \(reason)"
            case .timedOut: "no reply from refreshd in time"
            }
        }
    }

    package let path: String
    let fd: Int32
    private var buffer: [UInt8] = []
    private let decoder = JSONDecoder()
    private let encoder = JSONEncoder()
    private var nextID = 1

    /// Connects to `STATE/control.sock`.
    package static func connect(stateDirectory: String, timeout: Duration = .seconds(10)) throws(Failure) -> ControlClient {
        try ControlClient(path: ControlServer.socketPath(stateDirectory: stateDirectory), timeout: timeout)
    }

    package init(path: String, timeout: Duration = .seconds(10)) throws(Failure) {
        self.path = path
        guard path.utf8.count < 108 else { throw .unusable(path: path, reason: "the path is longer than a Unix socket allows (107 bytes)") }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unusable(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (i, byte) in path.utf8.enumerated() { sunPath[i] = byte }
        }
        let rc = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc != 0 {
            let code = errno
            Glibc.close(fd)
            let reason = String(cString: strerror(code))
            if code == ENOENT || code == ECONNREFUSED { throw .notRunning(path: path, reason: reason) }
            throw .unusable(path: path, reason: reason)
        }
        setTimeout(timeout)
    }

    deinit { Glibc.close(fd) }

    /// How long a read waits before it fails (zero: forever).
    package func setTimeout(_ timeout: Duration) {
        let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        var tv = timeval(tv_sec: Int(ms / 1000), tv_usec: Int(ms % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends one request line (an `id` is added if it has none).
    package func send(_ request: ControlRequest) throws(Failure) {
        var request = request
        if request.id == nil {
            request.id = nextID
            nextID += 1
        }
        guard let data = try? encoder.encode(request) else { throw .broken("cannot encode the request") }
        try sendRaw(Array(data) + [0x0A])
    }

    /// Sends bytes as they are (tests send malformed lines with it).
    package func sendRaw(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .broken("send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// The next line the server wrote, without its newline; nil when the server closed the
    /// connection.
    package func readLine() throws(Failure) -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                if errno == ECONNRESET { return nil }
                throw .broken("recv: \(String(cString: strerror(errno)))")
            }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// The next reply or pushed event; nil at the end of the connection.
    package func read() throws(Failure) -> ControlReply? {
        guard let line = try readLine() else { return nil }
        do {
            return try decoder.decode(ControlReply.self, from: Data(line))
        } catch {
            throw .broken("unreadable reply \(String(decoding: line.prefix(200), as: UTF8.self)): \(error)")
        }
    }

    /// Sends a request and returns its reply (pushed events in between are skipped).
    package func request(_ request: ControlRequest) throws(Failure) -> ControlReply {
        try send(request)
        while let reply = try read() {
            if reply.event == nil { return reply }
        }
        throw .broken("refreshd closed the connection before replying")
    }
}
