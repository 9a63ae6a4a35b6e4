import Foundation
import Testing

/// Failure notifications of the real `refreshd run` (issue 25): a loopback webhook receiver
/// (python3's http.server, a child of the test) gets each failed run once, attempts are retried
/// while it answers 503, and kill -9 at the crash points never loses one; the one repeat a kill
/// between the receiver's answer and the delivered commit causes carries the same
/// Idempotency-Key. A command notifier gets the run in its environment.
@Suite(.serialized) struct NotificationTests {
    /// Appends `{key, status, body}` for each POST to received.jsonl (before answering), and
    /// answers 503 while the file `down` exists, else 200.
    static let receiver = """
        import http.server, json, os, sys
        root = sys.argv[1]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = 503 if os.path.exists(os.path.join(root, "down")) else 200
                with open(os.path.join(root, "received.jsonl"), "a") as f:
                    f.write(json.dumps({"key": self.headers.get("Idempotency-Key"), "status": status,
                                        "type": self.headers.get("Content-Type"), "body": json.loads(body)}) + "\\n")
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(os.path.join(root, "port.tmp"), "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(os.path.join(root, "port.tmp"), os.path.join(root, "port"))
        server.serve_forever()
        """

    struct Received {
        var key: String
        var status: Int
        var type: String?
        var body: [String: Any]
    }

    /// Starts the receiver in `box`; returns it and its port.
    static func startReceiver(_ box: Sandbox) throws -> (CLI.Running, Int) {
        try receiver.write(toFile: box.root + "/receiver.py", atomically: true, encoding: .utf8)
        let process = try CLI.start([box.root + "/receiver.py", box.root], executable: "/usr/bin/python3")
        guard waitFor(timeout: 10, { box.read("port") != nil }), let port = box.read("port").flatMap({ Int($0) }) else {
            process.cleanUp()
            throw POSIXError(.ETIMEDOUT)
        }
        return (process, port)
    }

    static func received(_ box: Sandbox) -> [Received] {
        (box.read("received.jsonl") ?? "").split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let key = object["key"] as? String, let status = object["status"] as? Int,
                  let body = object["body"] as? [String: Any] else { return nil }
            return Received(key: key, status: status, type: object["type"] as? String, body: body)
        }
    }

    /// A job that fails its first run (exit 3, after a line of output) and succeeds after.
    static func failOnce(_ box: Sandbox, notifier: String) throws {
        try box.write("once.yaml", """
            identifier: test.once
            kind: processing
            command: ["/bin/sh", "-c", "if [ -e \(box.root)/failed ]; then exit 0; fi; touch \(box.root)/failed; echo boom; exit 3"]
            retry: {limit: 0}
            on-failure: \(notifier)
            """)
    }

    @Test func eachFailedRunReachesTheReceiverOnceAndIsRetriedWhileItIsDown() throws {
        let box = Sandbox()
        defer { box.remove() }
        let (receiver, port) = try Self.startReceiver(box)
        defer { receiver.cleanUp() }
        try box.write("flaky.yaml", """
            identifier: test.flaky
            kind: processing
            command: ["/bin/sh", "-c", "echo boom $REFRESH_RUN_ID; exit 3"]
            resubmit: {after: 1s}
            retry: {limit: 0}
            on-failure: {webhook: "http://127.0.0.1:\(port)/hook", timeout: 2s}
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", box.root + "/metrics.prom"])
        defer { daemon.cleanUp() }
        #expect(waitFor { Set(Self.received(box).map(\.key)).count >= 2 })
        // The receiver goes down for about 2.5 s: attempts fail and are tried again (1 s, 2 s).
        _ = FileManager.default.createFile(atPath: box.root + "/down", contents: nil)
        #expect(waitFor { Self.received(box).contains { $0.status == 503 } })
        usleep(2_500_000)
        try FileManager.default.removeItem(atPath: box.root + "/down")
        let retried = { Self.received(box).first { $0.status == 503 }?.key }
        #expect(waitFor(timeout: 10) { Self.received(box).contains { $0.key == retried() && $0.status == 200 } })
        // Counted in the metrics, by job, kind and result.
        let retriedMetric = "refreshd_notifications_total{job=\"test.flaky\",kind=\"failure\",result=\"retry\"}"
        #expect(waitFor { box.read("metrics.prom")?.contains(retriedMetric) == true })
        let metrics = box.read("metrics.prom") ?? ""
        #expect(metrics.contains("# HELP refreshd_notifications_total "))
        #expect(metrics.contains("refreshd_notifications_total{job=\"test.flaky\",kind=\"failure\",result=\"delivered\"}"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)

        let all = Self.received(box)
        var delivered: [String: Int] = [:]
        for r in all where r.status == 200 { delivered[r.key, default: 0] += 1 }
        #expect(delivered.count >= 2)
        #expect(delivered.values.allSatisfy { $0 == 1 }, "a notification reached the receiver twice: \(delivered)")
        #expect(all.filter { $0.key == retried() }.count >= 2)
        for r in all {
            #expect(r.type == "application/json")
            #expect(r.body["id"] as? String == r.key)
            #expect(r.body["kind"] as? String == "failure")
            #expect(r.body["job"] as? String == "test.flaky")
            #expect(r.body["outcome"] as? String == "failure")
            #expect(r.body["exitStatus"] as? Int == 3)
            let run = r.body["run"] as? Int ?? -1
            #expect(r.key.hasSuffix("-\(run)-failure"))
            #expect(r.body["outputTail"] as? String == "boom \(run)")
            #expect(r.body["started"] is String && r.body["ended"] is String)
        }
        let log = daemon.errors()
        #expect(log.contains("failure notification of test.flaky run"))
        #expect(log.contains("not delivered (webhook http://127.0.0.1:\(port)/hook: HTTP 503): attempt 2 at"))
        #expect(log.contains("notified failure of test.flaky run"))
    }

    /// Killed after the run's end (and its notification) is committed, before any attempt: the
    /// restart sends it, once.
    @Test func killedAfterTheCommitTheRestartDeliversItOnce() throws {
        let box = Sandbox()
        defer { box.remove() }
        let (receiver, port) = try Self.startReceiver(box)
        defer { receiver.cleanUp() }
        try Self.failOnce(box, notifier: "{webhook: \"http://127.0.0.1:\(port)/hook\"}")
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_CRASH_AT": "notification-committed"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        #expect(Self.received(box).isEmpty)

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("notified failure of test.once run 1") })
        usleep(300_000)
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        let all = Self.received(box)
        #expect(all.count == 1)
        #expect(all.first?.key.hasSuffix("-1-failure") == true && all.first?.status == 200)
        #expect(all.first?.body["outputTail"] as? String == "boom")
    }

    /// Killed after the receiver answered 2xx and before the delivered commit: the restart
    /// sends it again, under the same Idempotency-Key (the documented window), and only then.
    @Test func killedBetweenTheAnswerAndTheDeliveredCommitItRepeatsWithTheSameKey() throws {
        let box = Sandbox()
        defer { box.remove() }
        let (receiver, port) = try Self.startReceiver(box)
        defer { receiver.cleanUp() }
        try Self.failOnce(box, notifier: "{webhook: \"http://127.0.0.1:\(port)/hook\"}")
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_CRASH_AT": "notification-delivered"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        #expect(Self.received(box).count == 1)

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("notified failure of test.once run 1") })
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        // A third start finds nothing held: nothing more is sent.
        let third = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { third.cleanUp() }
        usleep(800_000)
        third.signal(SIGTERM)
        #expect(third.wait() == 0)
        let all = Self.received(box)
        #expect(all.count == 2)
        #expect(Set(all.map(\.key)).count == 1)
        #expect(all.allSatisfy { $0.status == 200 && $0.key.hasSuffix("-1-failure") })
    }

    /// A command notifier runs with the run in REFRESHD_* variables; one that outlives its
    /// timeout is killed and the attempt fails; one still running when refreshd stops is killed.
    @Test func aCommandNotifierGetsTheRunInItsEnvironment() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.failOnce(box, notifier: """
            {command: ["/bin/sh", "-c", "env | grep ^REFRESHD_ | sort > \(box.root)/notified.env"]}
            """)
        try box.write("slow.yaml", """
            identifier: test.slow
            kind: processing
            command: ["/bin/sh", "-c", "exit 1"]
            retry: {limit: 0}
            on-failure: {command: ["/bin/sh", "-c", "echo $$ > \(box.root)/slow.pid; exec sleep 30"], timeout: 1s}
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("notified failure of test.once run") })
        #expect(waitFor { daemon.errors().contains("(command /bin/sh: timed out after 1s): attempt 2 at") })
        let slow = try #require(box.waitForPID("slow.pid"))
        #expect(waitFor(timeout: 3) { processIsGone(slow) })
        // The second attempt is running when refreshd stops: the stop kills it (its record
        // stays for the next start).
        var second: Int32?
        #expect(waitFor {
            second = box.read("slow.pid").flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return second != nil && second != slow
        })
        defer { if let second { kill(-second, SIGKILL) } }
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(waitFor(timeout: 3) { second.map(processIsGone) ?? false })
        let env = Dictionary(uniqueKeysWithValues: (box.read("notified.env") ?? "").split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        })
        #expect(env["REFRESHD_JOB"] == "test.once")
        #expect(env["REFRESHD_OUTCOME"] == "failure")
        #expect(env["REFRESHD_EXIT_STATUS"] == "3")
        #expect(env["REFRESHD_NOTIFICATION_KIND"] == "failure")
        #expect(env["REFRESHD_OUTPUT_TAIL"] == "boom")
        let run = try #require(env["REFRESHD_RUN_ID"])
        #expect(env["REFRESHD_NOTIFICATION_ID"]?.hasSuffix("-\(run)-failure") == true)
        #expect(env["REFRESHD_ENDED"] != nil && env["REFRESHD_STARTED"] != nil)
    }

    /// Killed (kill -9) while a notifier command runs, with a child in a session of its own: the
    /// next start kills both (found by their environment) before it sends the notification again.
    @Test func aNotifierLeftRunningByAKilledRefreshdIsKilledAtTheNextStart() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.failOnce(box, notifier: """
            {command: ["/bin/sh", "-c", "echo $$ > \(box.root)/notifier.pid; setsid /bin/sh -c 'echo $$ > \(box.root)/child.pid; exec sleep 1000' & exec sleep 1000"], timeout: 5m}
            """)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { first.cleanUp() }
        let notifier = try #require(box.waitForPID("notifier.pid"))
        let escaped = try #require(box.waitForPID("child.pid"))
        defer { kill(notifier, SIGKILL); kill(escaped, SIGKILL) }
        first.signal(SIGKILL)
        #expect(first.wait() == 128 + SIGKILL)
        #expect(!processIsGone(notifier) && !processIsGone(escaped), "both outlive the kill -9")
        try? FileManager.default.removeItem(atPath: box.root + "/notifier.pid")

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("reaped 2 notifier processes a previous refreshd left running") },
                "\(second.errors())")
        #expect(waitFor(timeout: 3) { processIsGone(notifier) && processIsGone(escaped) })
        // The notification is still held: the new refreshd runs its notifier again.
        let again = box.waitForPID("notifier.pid")
        #expect(again != nil && again != notifier)
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        if let again { #expect(waitFor(timeout: 3) { processIsGone(again) }) }
    }

    /// A notification its receiver refuses is held: `refreshd status` shows it, live (`--json`,
    /// with its failed attempts) and from the saved state once refreshd has stopped.
    @Test func heldNotificationsAreInTheStatus() throws {
        let box = Sandbox()
        defer { box.remove() }
        let (receiver, port) = try Self.startReceiver(box)
        defer { receiver.cleanUp() }
        _ = FileManager.default.createFile(atPath: box.root + "/down", contents: nil)
        try Self.failOnce(box, notifier: "{webhook: \"http://127.0.0.1:\(port)/hook\"}")
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("notification of test.once run 1 not delivered") })
        let live = try CLI.run(["status", "--state", box.state, "--json"])
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(live.stdout.utf8))) as? [String: Any], "\(live)")
        let held = object["heldNotifications"] as? [[String: Any]] ?? []
        #expect(held.count == 1, "\(live.stdout)")
        #expect(held.first?["job"] as? String == "test.once" && held.first?["kind"] as? String == "failure")
        #expect((held.first?["attempts"] as? Int ?? 0) >= 1 && held.first?["notifier"] as? String == "webhook http://127.0.0.1:\(port)/hook")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let saved = try CLI.run(["status", "--state", box.state, "--jobs", box.jobs])
        #expect(saved.stdout.contains("Held notifications (1, sent at the next start):"), "\(saved.stdout)")
        #expect(saved.stdout.contains("failure of test.once run 1 (failure, ended "), "\(saved.stdout)")
    }
}
