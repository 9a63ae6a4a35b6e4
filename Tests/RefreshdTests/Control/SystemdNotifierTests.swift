import Foundation
import Testing
@testable import Refreshd
@testable import RefreshdDaemon

/// sd_notify against a datagram socket that records what it receives.
@Suite struct SystemdNotifierTests {
    /// A bound SOCK_DGRAM socket (a path, or an abstract name when it starts with '@').
    final class Receiver {
        let fd: Int32
        let name: String
        init(name: String) {
            self.name = name
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { p in for (i, b) in bytes.enumerated() { p[i] = b } }
            let length = MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1)
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) } }
            var tv = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : nil
        }

        deinit {
            Glibc.close(fd)
            if !name.hasPrefix("@") { unlink(name) }
        }
    }

    @Test func notifiesAPathSocket() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        let receiver = Receiver(name: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        #expect(notifier.notify("READY=1"))
        #expect(receiver.receive() == "READY=1")
        #expect(notifier.notify("STOPPING=1"))
        #expect(receiver.receive() == "STOPPING=1")
    }

    @Test func notifiesAnAbstractSocket() {
        let name = "@refreshd-test-\(UUID().uuidString.prefix(8))"
        let receiver = Receiver(name: name)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).notify("WATCHDOG=1"))
        #expect(receiver.receive() == "WATCHDOG=1")
    }

    @Test func withoutASocketNothingIsSent() {
        #expect(!SystemdNotifier(environment: [:]).isEnabled)
        #expect(!SystemdNotifier(environment: [:]).notify("READY=1"))
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/path"]).isEnabled)
    }

    @Test func keepAliveIsHalfTheWatchdog() {
        #expect(SystemdNotifier.keepAliveInterval(environment: ["WATCHDOG_USEC": "4000000"]) == .seconds(2))
        #expect(SystemdNotifier.keepAliveInterval(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"], pid: 2) == nil)
        #expect(SystemdNotifier.keepAliveInterval(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "2"], pid: 2) == .seconds(2))
        #expect(SystemdNotifier.keepAliveInterval(environment: ["WATCHDOG_USEC": "soon"]) == nil)
        #expect(SystemdNotifier.keepAliveInterval(environment: [:]) == nil)
    }
}

extension SystemdNotifierTests {
    @Test func aReceiverThatNeverReadsNeverBlocksTheSender() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        let receiver = Receiver(name: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        let began = Date()
        var refused = 0
        for _ in 0..<1000 where !notifier.notify("WATCHDOG=1") { refused += 1 }
        #expect(Date().timeIntervalSince(began) < 2)
        #expect(refused > 0, "the receiver's queue filled up and sends were dropped, not waited on")
        #expect(receiver.receive() == "WATCHDOG=1")
    }
}
