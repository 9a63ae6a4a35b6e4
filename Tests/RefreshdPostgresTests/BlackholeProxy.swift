import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of the private server's unix socket that can stop forwarding without
/// closing anything (issue 32): a partition as a node sees it, where a call gets no answer and
/// waits for its bound (a refused connection, which the server's restart gives, fails at once).
///
/// Listens on 127.0.0.1 (an ephemeral port); each accepted connection gets a connection to the
/// server's socket and two threads copying bytes. While `cut`, the threads copy nothing and new
/// connections are accepted but not answered; `heal()` lets the bytes through again. `stop()`
/// closes every descriptor and ends the threads.
final class BlackholeProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let target: String
    private let lock = NSLock()
    private var isCut = false
    private var stopped = false
    private var descriptors: [Int32] = []

    /// A proxy to the unix socket at `socketPath`.
    init(socketPath: String) throws {
        target = socketPath
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 64) == 0 else {
            throw PrivateServer.Failure("proxy: cannot listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        self.listener = listener
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops forwarding (nothing is closed: the peers wait).
    func cut() { lock.withLock { isCut = true } }

    /// Forwards again.
    func heal() { lock.withLock { isCut = false } }

    /// Closes the listener and every connection; the threads end.
    func stop() {
        let all = lock.withLock { () -> [Int32] in
            stopped = true
            return descriptors
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in all {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                let bytes = Array(target.utf8.prefix(raw.count - 1))
                raw.copyBytes(from: bytes + [0])
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            let keep = lock.withLock { () -> Bool in
                guard !stopped else { return false }
                descriptors += [client, server]
                return true
            }
            guard keep, connected == 0 else {
                close(client)
                close(server)
                continue
            }
            Thread.detachNewThread { [self] in copy(from: client, to: server) }
            Thread.detachNewThread { [self] in copy(from: server, to: client) }
        }
    }

    /// Copies bytes while not cut (polling the flag every 50 ms; a cut stops reading at once).
    private func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let (cut, ended) = lock.withLock { (isCut, stopped) }
            if ended { return }
            if cut {
                usleep(50_000)
                continue
            }
            var poller = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready < 0, errno != EINTR { return }
            guard ready > 0 else { continue }
            if lock.withLock({ isCut }) { continue }  // cut while waiting: the bytes stay unread
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else {
                shutdown(destination, Int32(SHUT_WR))
                return
            }
            var sent = 0
            while sent < count {
                // send, not write: a peer gone away must not SIGPIPE the test process.
                let n = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                sent += n
            }
        }
    }
}
