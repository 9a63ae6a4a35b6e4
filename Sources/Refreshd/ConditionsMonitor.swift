import CLibUV
import Glibc
import RefreshdCore

/// Watches external power and network while some request waits on them, without busy polling.
///
/// Event-driven where Linux offers it: a NETLINK_ROUTE socket (links, addresses, routes) and a
/// NETLINK_KOBJECT_UEVENT socket (power supply changes), each watched with uv_poll. The safety
/// net for notices that never come (containers where uevents do not arrive) is the runtime's
/// periodic re-read (`ConditionsReread`, one of its deadlines), which calls `check()` through
/// `readConditions`: this class holds no timer. When nothing waits, it holds no handles.
final class ConditionsMonitor {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let probe: ConditionsProbe
    private let onReading: (Conditions) -> Void
    private var watching = false
    private var polls: [(UnsafeMutablePointer<uv_poll_t>, Int32)] = []

    init(loop: UnsafeMutablePointer<uv_loop_t>, probe: ConditionsProbe, onReading: @escaping (Conditions) -> Void) {
        self.loop = loop
        self.probe = probe
        self.onReading = onReading
    }

    /// Starts watching and reports a fresh reading at once.
    func start() {
        guard !watching else { return }
        watching = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        let routeGroups = UInt32(0x1 | 0x10 | 0x40 | 0x400)  // LINK, IPV4_IFADDR, IPV4_ROUTE, IPV6_ROUTE
        for (proto, groups) in [(Int32(0), routeGroups), (Int32(15), UInt32(1))] {  // ROUTE, KOBJECT_UEVENT
            if let fd = Self.netlinkSocket(protocol: proto, groups: groups) { watch(fd: fd, context: context) }
        }
        check()
    }

    func stop() {
        guard watching else { return }
        watching = false
        for (poll, fd) in polls {
            uv_poll_stop(poll)
            closeAndFree(poll)
            Glibc.close(fd)
        }
        polls.removeAll()
    }

    func check() { onReading(probe.read()) }

    private func watch(fd: Int32, context: UnsafeMutableRawPointer) {
        let poll = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        guard uv_poll_init(loop, poll, fd) == 0 else { poll.deallocate(); Glibc.close(fd); return }
        poll.pointee.data = context
        uv_poll_start(poll, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            guard let handle, let data = handle.pointee.data else { return }
            var fd: uv_os_fd_t = -1
            uv_fileno(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self), &fd)
            var buffer = [UInt8](repeating: 0, count: 8192)
            while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
            Unmanaged<ConditionsMonitor>.fromOpaque(data).takeUnretainedValue().check()
        }
        polls.append((poll, fd))
    }

    private static func netlinkSocket(protocol proto: Int32, groups: UInt32) -> Int32? {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), proto)
        guard fd >= 0 else { return nil }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = groups
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        if bound != 0 { Glibc.close(fd); return nil }
        return fd
    }
}
