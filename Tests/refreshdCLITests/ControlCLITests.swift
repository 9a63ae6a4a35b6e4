import Foundation
import Testing

/// `ctl`, `why`, `status` and `watch` against a real `refreshd run`, with systemd's
/// notifications recorded by a test socket and the metrics file read by a Prometheus parser.
@Suite(.serialized) struct ControlCLITests {
    static let sleepy = """
        identifier: test.sleepy
        kind: processing
        command: ["/bin/sleep", "30"]
        earliest: +1h
        allowance: 60s
        grace: 2s
        """
    static let beat = """
        identifier: test.beat
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1s}
        """

    /// A datagram socket standing in for systemd's NOTIFY_SOCKET, recording what arrives.
    final class NotifyRecorder: @unchecked Sendable {
        let path: String
        let fd: Int32
        init(path: String) {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        /// Everything received so far.
        func drain() -> [String] {
            var messages: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return messages }
                messages.append(String(decoding: buffer[..<n], as: UTF8.self))
            }
        }
        deinit { close(fd); unlink(path) }
    }

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    @Test func operateALiveRefreshd() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("sleepy.yaml", Self.sleepy)
        try box.write("beat.yaml", Self.beat)
        let notify = NotifyRecorder(path: box.root + "/notify.sock")
        let metrics = box.root + "/metrics.prom"
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", metrics],
                                   environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
        defer { daemon.cleanUp() }
        var received: [String] = []
        #expect(waitFor { received += notify.drain(); return received.contains { $0.hasPrefix("READY=1") } }, "READY=1 once restored and armed")
        var info = stat()
        #expect(lstat(box.state + "/control.sock", &info) == 0 && info.st_mode & 0o777 == 0o600)

        // A second refreshd on the same state directory still refuses to start, and the first
        // one's socket is untouched.
        let second = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state], timeout: 15)
        #expect(second.status == 1)
        #expect(second.stderr.contains("lock"))

        let pending = try CLI.run(["ctl", "pending", "--state", box.state, "--json"])
        #expect(pending.status == 0)
        let ids = ((Self.json(pending.stdout)?["pending"] as? [[String: Any]]) ?? []).compactMap { $0["identifier"] as? String }
        #expect(Set(ids) == ["test.sleepy", "test.beat"])
        #expect(try CLI.run(["ctl", "pending", "--state", box.state]).stdout.contains("test.sleepy  processing"))

        let submit = try CLI.run(["ctl", "submit", "test.sleepy", "--earliest", "+2h", "--state", box.state])
        #expect(submit.status == 0 && submit.stdout.hasPrefix("submitted test.sleepy earliest"))
        let badWhen = try CLI.run(["ctl", "submit", "test.sleepy", "--earliest", "soon", "--state", box.state, "--json"])
        #expect(badWhen.status == 1)
        #expect(((Self.json(badWhen.stdout)?["error"] as? [String: Any])?["code"] as? String) == "bad-request")

        let whyWaiting = try CLI.run(["why", "test.sleepy", "--state", box.state, "--json"])
        #expect((Self.json(whyWaiting.stdout)?["reasons"] as? [String]) == ["earliest-begin"])

        let launch = try CLI.run(["ctl", "simulate-launch", "test.sleepy", "--state", box.state])
        #expect(launch.status == 0 && launch.stdout.hasPrefix("launched test.sleepy run"), "\(launch.stderr)")
        #expect(waitFor { daemon.errors().contains("test.sleepy[") && daemon.errors().contains("started pid") })
        let whyRunning = try CLI.run(["why", "test.sleepy", "--state", box.state])
        #expect(whyRunning.stdout.contains("is running now"))

        // watch, not on a terminal: the first screen, then plain event lines as they are pushed.
        let watch = try CLI.start(["watch", "--state", box.state, "--for", "1.5"])
        defer { watch.cleanUp() }
        let expire = try CLI.run(["ctl", "simulate-expiration", "test.sleepy", "--state", box.state, "--json"])
        #expect(expire.status == 0)
        #expect((Self.json(expire.stdout)?["ok"] as? Bool) == true)
        #expect(watch.wait(timeout: 10) == 0)
        let view = watch.output()
        #expect(view.contains("Next due") && view.contains("Running"))
        // Issue 36: it said "(none yet)" and then printed the twenty latest events under it.
        #expect(view.contains("\nEvents (the latest first, then each as it happens)\n"), "\(view)")
        #expect(!view.contains("(none yet)"), "\(view)")
        #expect(view.contains("expiration delivered") || view.contains("expired"), "\(view)")
        #expect(view.contains("finished test.beat"))
        #expect(!view.contains("\u{1B}["), "no escape codes when not a terminal")

        #expect(waitFor { (try? CLI.run(["status", "--state", box.state]))?.stdout.contains("expired after") == true })
        let status = try CLI.run(["status", "--state", box.state])
        #expect(status.stdout.hasPrefix("Live from the running refreshd"))
        let statusJSON = Self.json(try CLI.run(["status", "--state", box.state, "--json"]).stdout)
        #expect(statusJSON?["pending"] != nil && statusJSON?["counters"] != nil)

        let cancel = try CLI.run(["ctl", "cancel", "test.beat", "--state", box.state])
        #expect(cancel.stdout == "cancelled test.beat\n")
        let none = try CLI.run(["ctl", "simulate-launch", "test.beat", "--state", box.state, "--json"])
        #expect(none.status == 1)
        #expect(((Self.json(none.stdout)?["error"] as? [String: Any])?["code"] as? String).map { ["not-pending", "run-in-flight"].contains($0) } == true)
        let all = try CLI.run(["ctl", "cancel-all", "--state", box.state])
        #expect(all.status == 0 && all.stdout.hasPrefix("cancelled"))

        #expect(waitFor { received += notify.drain(); return received.contains("WATCHDOG=1") })
        #expect(waitFor { (try? String(contentsOfFile: metrics, encoding: .utf8))?.contains("refreshd_runs_total") == true })
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains(#"refreshd_runs_total{job="test.sleepy",outcome="expired"} 1"#))
        try PrometheusText.check(text, in: box.root)

        received += notify.drain()  // room in the queue: a real systemd reads at once
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 15) == 0)
        received += notify.drain()
        #expect(received.contains("STOPPING=1"))
        #expect(access(box.state + "/control.sock", F_OK) != 0)

        // Not running: ctl says so, why and status read the state files.
        let down = try CLI.run(["ctl", "pending", "--state", box.state, "--json"])
        #expect(down.status == 1)
        #expect(((Self.json(down.stdout)?["error"] as? [String: Any])?["code"] as? String) == "not-running")
        let whyDown = try CLI.run(["why", "test.sleepy", "--state", box.state, "--jobs", box.jobs, "--json"])
        #expect(whyDown.status == 0)
        #expect((Self.json(whyDown.stdout)?["live"] as? Bool) == false)
        #expect((Self.json(whyDown.stdout)?["reasons"] as? [String]) == ["not-pending"])
        #expect(try CLI.run(["status", "--state", box.state]).stdout.hasPrefix("refreshd is not running on \(box.state)"))
    }

    @Test func installServiceWritesANotifyUnit() throws {
        let box = Sandbox()
        defer { box.remove() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/install-service").path
        let unit = box.root + "/refreshd.service"
        let status = system("'\(script)' --output '\(unit)' --binary /usr/local/bin/refreshd --state /var/lib/refreshd --watchdog 20 --metrics-file /var/lib/node/refreshd.prom >/dev/null")
        #expect(status == 0)
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        #expect(text.contains("Type=notify"))
        #expect(text.contains("WatchdogSec=20"))
        #expect(text.contains("ExecStart=/usr/local/bin/refreshd run --jobs "))
        #expect(text.contains("--metrics-file /var/lib/node/refreshd.prom"))
    }
}
