import Glibc

/// Who is on the other end of a Unix socket (`SO_PEERCRED`), and whether the control socket lets
/// them in: refreshd's own user or root, nobody else. The file mode (0600) already keeps other
/// users out; the check also holds when the mode or the directory's was loosened by hand.
struct PeerCredentials: Equatable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    /// The credentials the kernel recorded when the peer connected; nil if they cannot be read.
    static func of(socket fd: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides it behind _GNU_SOURCE).
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        let rc = withUnsafeMutablePointer(to: &raw) { getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, $0, &length) }
        guard rc == 0, Int(length) == MemoryLayout.size(ofValue: raw) else { return nil }
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2)
    }

    /// Whether a peer with `peerUID` may use a control socket served by `serverUID`.
    static func allows(peerUID: UInt32, serverUID: UInt32) -> Bool {
        peerUID == serverUID || peerUID == 0
    }
}
