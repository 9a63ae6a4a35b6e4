import CLibUV  // its headers carry the socket type constants (bits/socket_type.h) into scope
import Glibc

/// sd_notify without libsystemd: one datagram on `$NOTIFY_SOCKET` per state change (`READY=1`,
/// `STOPPING=1`, `WATCHDOG=1`, `STATUS=...`).
///
/// The protocol is a few lines of socket code (an `AF_UNIX` `SOCK_DGRAM` socket, one `sendto`),
/// so refreshd does not link libsystemd: nothing to install, nothing that differs between
/// distributions. A name starting with `@` is an abstract socket (its first byte becomes NUL and
/// the address is exactly as long as the name). Without `$NOTIFY_SOCKET` (not started by systemd
/// as `Type=notify`), every call does nothing.
package struct SystemdNotifier: Sendable {
    /// `$NOTIFY_SOCKET`, if set and usable.
    package let socketPath: String?

    package init(environment: [String: String]) {
        let path = environment["NOTIFY_SOCKET"] ?? ""
        socketPath = (path.hasPrefix("/") || path.hasPrefix("@")) && path.utf8.count < 108 ? path : nil
    }

    package var isEnabled: Bool { socketPath != nil }

    /// Sends one notification (newline-separated assignments). False if there is no socket or
    /// the datagram could not be sent (systemd is not listening, or its queue is full). Never
    /// blocks: it is called on the loop thread, which must not wait for a reader.
    @discardableResult
    package func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketPath.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (i, byte) in name.enumerated() { path[i] = byte }
        }
        // Abstract names are exactly as long as given; paths are NUL-terminated.
        let length = MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), address, socklen_t(length))
            }
        }
        return sent == bytes.count
    }

    /// Half of `$WATCHDOG_USEC` (systemd's advice for the keep-alive period), when the watchdog
    /// is on and meant for this process (`$WATCHDOG_PID`, if set, is our pid).
    package static func keepAliveInterval(environment: [String: String], pid: Int32 = getpid()) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return .microseconds(Int64(min(usec / 2, UInt64(Int64.max))))
    }
}
