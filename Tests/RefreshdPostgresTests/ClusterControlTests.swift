import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import RefreshdPostgres
import RefreshdRuntime
import Testing

/// Operating cluster mode (issue 24) through the real CLI: `ctl`, `status`, `why` against ANY node, on real nodes and a private
/// PostgreSQL (`PrivateServer`). Every node is killed and every folder removed, pass or fail.
@Suite(.serialized) struct ClusterControlTests {
    /// A temporary folder with a jobs folder, removed at the end.
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    // MARK: ctl, status and why against any node

    /// The job's shard and its leader, from `status --json` on `node`.
    func leader(_ scratch: ClusterSandbox, via node: String, of identifier: String) throws -> (shard: Int, owner: String?, report: StatusReport?) {
        let (_, output) = try scratch.cli(["status", "--json", "--state", scratch.root + "/state-" + node])
        guard let report = try? JSONDecoder().decode(StatusReport.self, from: Data(output.utf8)), let cluster = report.cluster else {
            return (-1, nil, nil)
        }
        // A plain job is in the shard of its namespace (here: the identifier without its last label).
        let namespace = identifier.split(separator: ".").dropLast().joined(separator: ".")
        let shard = ShardMap(shardCount: cluster.shards.count).shard(ofJob: identifier, namespace: namespace)
        return (shard, cluster.shards.first { $0.shard == shard && $0.led }?.owner, report)
    }

    /// A sandbox, a fresh database of `shards` shards, and `test.manual` (pending an hour ahead:
    /// it runs only when submitted) appending `$ECHOING $NODE` to the returned file at each run.
    func manualJob(shards: Int, echoing: String) throws -> (ClusterSandbox, String, String) {
        let scratch = try ClusterSandbox("ctl", shards: nil)
        let conninfo = try PrivateServer.shared.get().freshDatabase()
        try PostgresDatabase(connection: conninfo, shardCount: shards).close()
        let out = scratch.root + "/runs.txt"
        try """
            identifier: test.manual
            kind: processing
            command: ["/bin/sh", "-c", "echo \\"$\(echoing) $NODE\\" >> \(out)"]
            earliest: +1h
            allowance: 5s
            """.write(toFile: scratch.root + "/jobs/manual.yaml", atomically: true, encoding: .utf8)
        return (scratch, conninfo, out)
    }

    @Test func aSubmitToAnyNodeRunsOnceOnTheShardsLeaderAndARetryIsAppliedOnce() throws {
        let (scratch, conninfo, out) = try manualJob(shards: 4, echoing: "REFRESH_RUN_ID")
        try """
            identifier: test.feed
            template: true
            parameters: [user]
            kind: processing
            command: ["/bin/true", "{user}"]
            earliest: +1h
            """.write(toFile: scratch.root + "/jobs/feed.yaml", atomically: true, encoding: .utf8)
        for name in ["a", "b"] { try scratch.start(name, lease: "2s", store: conninfo) }
        func lines() -> [[Substring]] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ") }
        }
        // Both nodes lead 2 of the 4 shards once the first has handed the surplus over.
        var owner: String?
        #expect(waitFor(20) {
            guard let report = try? leader(scratch, via: "a", of: "test.manual").report, let cluster = report.cluster else { return false }
            let owners = cluster.shards.filter(\.led).compactMap(\.owner)
            owner = try? leader(scratch, via: "a", of: "test.manual").owner
            return owners.count == 4 && owners.filter { $0 == "a" }.count == 2 && report.pending.count == 1
        }, "the shards were not spread: \(scratch.logs())")
        guard let owner else { return }
        let other = owner == "a" ? "b" : "a"
        // status and why answer alike on either node: the same requests, the same leaders.
        let viaA = try leader(scratch, via: "a", of: "test.manual")
        let viaB = try leader(scratch, via: "b", of: "test.manual")
        #expect(viaA.report?.pending.map(\.identifier) == ["test.manual"])
        #expect(viaA.report?.pending.map(\.identifier) == viaB.report?.pending.map(\.identifier))
        #expect(viaA.report?.cluster?.shards.map(\.owner) == viaB.report?.cluster?.shards.map(\.owner))
        #expect(viaB.owner == owner)
        let why = try scratch.cli(["why", "test.manual", "--state", scratch.root + "/state-" + other])
        #expect(why.status == 0 && why.output.contains("In the cluster, test.manual is in shard \(viaA.shard), led by node \(owner)"), "\(why.output)")
        // Read from the database on a running node: never "refreshd is not running" (the words
        // of the state files with refreshd stopped), and the same words on the leader's node.
        #expect(why.output.contains("Nothing holds it: it waits for its earliest begin date") && !why.output.contains("not running"),
                "\(why.output)")
        let whyOnLeader = try scratch.cli(["why", "test.manual", "--state", scratch.root + "/state-" + owner])
        // Up to the cluster's sentence (the leader says "this node", and its lease moved), but
        // for the time left (", in 59m 58s"), which moves between the two answers.
        func words(_ text: String) -> String {
            String(text.prefix { $0 != "\n" }.split(separator: " In the cluster,").first ?? "").replacing(/, in [^.(]+\./, with: ".")
        }
        #expect(!words(why.output).isEmpty && words(whyOnLeader.output) == words(why.output), "\(whyOnLeader.output)")

        // Submitted to the node that does NOT lead the job's shard: queued in the database, run
        // once by the leader, and answered with the leader's own reply (one machine's words).
        let submitted = try scratch.cli(["ctl", "submit", "test.manual", "--command-id", "retry-1", "--state", scratch.root + "/state-" + other])
        #expect(submitted.status == 0 && submitted.output.contains("submitted test.manual earliest ")
                    && submitted.output.contains("(shard \(viaA.shard); command id retry-1)"), "\(submitted.output)")
        #expect(waitFor(10) { lines().count == 1 }, "the submitted job did not run: \(scratch.logs())")
        #expect(lines().first?.last.map(String.init) == owner, "\(lines())")
        // The same command again (a retry) through either node: applied once, nothing runs.
        for node in [other, owner] {
            let retried = try scratch.cli(["ctl", "submit", "test.manual", "--command-id", "retry-1", "--state", scratch.root + "/state-" + node])
            #expect(retried.status == 0 && retried.output.contains("already applied (command retry-1 is applied once): submitted test.manual"), "\(retried.output)")
        }
        // A new command does run: the wait above would have seen a second run.
        let again = try scratch.cli(["ctl", "submit", "test.manual", "--state", scratch.root + "/state-" + other, "--json"])
        let reply = try? JSONDecoder().decode(ControlReply.self, from: Data(again.output.utf8))
        #expect(reply?.ok == true, "\(again.output)")
        #expect(waitFor(10) { lines().count == 2 }, "the second submit did not run: \(scratch.logs())")
        usleep(1_500_000)
        #expect(lines().count == 2, "a command ran twice: \(lines())")
        // A widget reload goes to every shard's leader (a kind may be a plain job's or an instance's).
        let reload = try scratch.cli(["ctl", "reload", "--all", "--state", scratch.root + "/state-" + other])
        #expect(reload.status == 0 && reload.output.contains("queued reload for 4 of 4 shards") && reload.output.contains("applied by all 4 leaders"),
                "\(reload.output)")
        // A leader's refusal reaches the operator with its own code, whichever node was asked.
        let ghost = try scratch.cli(["ctl", "instance", "remove", "test.feed", "ghost", "--state", scratch.root + "/state-" + other])
        #expect(ghost.status != 0 && ghost.output.contains("unknown-instance"), "\(ghost.output)")
        let unknown = try scratch.cli(["ctl", "submit", "test.nothing", "--state", scratch.root + "/state-" + other])
        #expect(unknown.status != 0 && unknown.output.contains("not-declared"), "\(unknown.output)")
        // A template never runs itself: the refusal names its instances, as on one machine.
        let template = try scratch.cli(["ctl", "submit", "test.feed", "--state", scratch.root + "/state-" + other])
        #expect(template.status != 0 && template.output.contains("test.feed is a template, not a job") && template.output.contains("test.feed[KEY]"),
                "\(template.output)")

        for node in scratch.nodes.values { node.kill(SIGTERM) }
        for (name, node) in scratch.nodes { #expect(node.wait(15) == 0, "\(name) did not stop cleanly: \(scratch.logs())") }
        #expect(processes(tagged: scratch.tag).isEmpty)
    }

    /// LISTEN/NOTIFY: with a 30 s lease the node surveys every 10 s, yet a command submitted
    /// through the control socket runs at once: its NOTIFY woke the leader.
    @Test func aQueuedCommandWakesTheLeaderAtOnce() throws {
        let (scratch, conninfo, out) = try manualJob(shards: 2, echoing: "REFRESH_RUN_ID")
        try scratch.start("a", lease: "30s", store: conninfo)
        #expect(waitFor(20) { (try? leader(scratch, via: "a", of: "test.manual").owner) == "a" }, "node a leads nothing: \(scratch.logs())")
        // Past the first survey's commands read: the next survey is ~10 s away.
        usleep(500_000)
        let submitted = Date()
        let reply = try scratch.cli(["ctl", "submit", "test.manual", "--state", scratch.root + "/state-a"])
        #expect(reply.status == 0, "\(reply.output)")
        let ran = waitFor(8) { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains(" a") }
        let took = Date().timeIntervalSince(submitted)
        #expect(ran && took < 5, "the command waited for the survey (\(took) s): \(scratch.logs())")
        print("cluster control: a submitted command ran \(String(format: "%.2f", took)) s after ctl submit (lease 30 s, survey every 10 s)")
        scratch.nodes["a"]?.kill(SIGTERM)
        #expect(scratch.nodes["a"]?.wait(15) == 0, "a did not stop cleanly: \(scratch.logs())")
    }

    /// A command whose shard's leader cannot apply it (stopped: its lease still holds) is
    /// answered within the bound as queued, naming the leader; it stays queued, and the next
    /// leader applies it once after the takeover.
    @Test func aCommandNotAppliedInTimeIsAnsweredQueuedAndRunsOnceAfterTheTakeover() throws {
        let (scratch, conninfo, out) = try manualJob(shards: 2, echoing: "REFRESH_RUN_ID")
        // A 6 s lease: the stopped leader's lease outlives the 2 s wait by far.
        for name in ["a", "b"] { try scratch.start(name, lease: "6s", store: conninfo) }
        var owner: String?
        #expect(waitFor(30) {
            guard let cluster = try? leader(scratch, via: "a", of: "test.manual").report?.cluster else { return false }
            owner = try? leader(scratch, via: "a", of: "test.manual").owner
            return Set(cluster.shards.filter(\.led).compactMap(\.owner)) == ["a", "b"]
        }, "the shards were not spread: \(scratch.logs())")
        guard let owner, let stopped = scratch.nodes[owner] else { return }
        let other = owner == "a" ? "b" : "a"
        stopped.kill(SIGSTOP)
        defer { stopped.kill(SIGCONT) }
        let asked = Date()
        let reply = try scratch.cli(["ctl", "submit", "test.manual", "--command-id", "late-1", "--state", scratch.root + "/state-" + other])
        let took = Date().timeIntervalSince(asked)
        #expect(reply.status == 0 && reply.output.contains("queued submit test.manual for shard") && reply.output.contains("led by node \(owner)")
                    && reply.output.contains("not applied within 2000 ms"), "\(reply.output)")
        #expect(took >= 1.9 && took < 4, "the reply took \(took) s")
        // The other node takes the shard over once the lease lapses, and applies it once.
        #expect(waitFor(30) { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains(" \(other)") }, "\(scratch.logs())")
        stopped.kill(SIGCONT)
        usleep(1_500_000)
        let runs = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(runs.count == 1, "the command ran \(runs.count) times: \(runs)")
        let retried = try scratch.cli(["ctl", "submit", "test.manual", "--command-id", "late-1", "--state", scratch.root + "/state-" + other])
        #expect(retried.status == 0 && retried.output.contains("already applied (command late-1 is applied once): submitted test.manual"), "\(retried.output)")
        for node in scratch.nodes.values { node.kill(SIGTERM) }
        for (name, node) in scratch.nodes { #expect(node.wait(20) == 0, "\(name) did not stop cleanly: \(scratch.logs())") }
        #expect(processes(tagged: scratch.tag).isEmpty)
    }

    // MARK: Reloading the job files

    /// Jobs added to the folder run once each, on whichever node leads their shard (each leader
    /// applies its shards' diff); SIGHUP reloads and does not stop a node; a folder cluster mode
    /// would not run is refused whole and the jobs in force stay.
    @Test func aChangedJobsFolderIsReloadedByEachShardsLeader() throws {
        let (scratch, conninfo, out) = try manualJob(shards: 4, echoing: "REFRESH_TASK_IDENTIFIER")
        for name in ["a", "b"] { try scratch.start(name, lease: "2s", store: conninfo) }
        func lines() -> [String] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        #expect(waitFor(20) {
            guard let cluster = try? leader(scratch, via: "a", of: "test.manual").report?.cluster else { return false }
            let owners = cluster.shards.filter(\.led).compactMap(\.owner)
            return owners.count == 4 && owners.filter { $0 == "a" }.count == 2
        }, "the shards were not spread: \(scratch.logs())")
        // Six jobs added (each in a namespace of its own: spread over the shards, so over both
        // nodes): each runs once.
        let added = (0..<6).map { "test.added.\($0)" }
        for id in added {
            try """
                identifier: \(id)
                namespace: \(id)
                kind: processing
                command: ["/bin/sh", "-c", "echo \\"$REFRESH_TASK_IDENTIFIER $NODE\\" >> \(out)"]
                allowance: 5s
                """.write(toFile: scratch.root + "/jobs/\(id).yaml", atomically: true, encoding: .utf8)
        }
        #expect(waitFor(15) { Set(lines().map { $0.split(separator: " ")[0] }) == Set(added.map { Substring($0) }) },
                "the added jobs did not all run: \(lines()) \(scratch.logs())")
        usleep(1_000_000)
        #expect(lines().count == added.count, "a job ran twice: \(lines())")
        // SIGHUP: a reload, never the end of a node.
        for node in scratch.nodes.values { node.kill(SIGHUP) }
        #expect(waitFor(10) { scratch.nodes.values.allSatisfy { $0.log().contains("reloaded the jobs (SIGHUP)") } }, "\(scratch.logs())")
        // An invalid job file: the reload is refused whole, located, and the jobs in force stay.
        try "identifier: test.bad\nkind: nightly\ncommand: [/bin/true]\n".write(toFile: scratch.root + "/jobs/bad.yaml", atomically: true, encoding: .utf8)
        #expect(waitFor(10) { scratch.nodes.values.allSatisfy { $0.log().contains("reload refused") && $0.log().contains("bad.yaml:2:7: ") } },
                "\(scratch.logs())")
        let submitted = try scratch.cli(["ctl", "submit", "test.added.0", "--state", scratch.root + "/state-b"])
        #expect(submitted.status == 0, "\(submitted.output)")
        #expect(waitFor(10) { lines().count == added.count + 1 }, "\(scratch.logs())")
        for node in scratch.nodes.values { node.kill(SIGTERM) }
        for (name, node) in scratch.nodes { #expect(node.wait(15) == 0, "\(name) did not stop cleanly: \(scratch.logs())") }
        #expect(processes(tagged: scratch.tag).isEmpty)
    }

    // MARK: Failure notifications

    /// Starts `executable` (not refreshd) with its output in one file.
    static func spawn(_ executable: String, _ arguments: [String], output: String) throws -> Node {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArgs = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, &cArgs, environ)
        guard rc == 0 else { throw PrivateServer.Failure("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        return Node(pid: pid, output: output)
    }

    /// A failed run's `on-failure` webhook is delivered in cluster mode too (the shards' hosts
    /// had no HTTP client: every delivery failed "this refreshd has no HTTP client").
    @Test func aFailedRunsWebhookIsDeliveredByTheShardsLeader() throws {
        let scratch = try ClusterSandbox("ctl", shards: nil)
        let conninfo = try PrivateServer.shared.get().freshDatabase()
        try PostgresDatabase(connection: conninfo, shardCount: 2).close()
        // A loopback receiver (python3's http.server): one line per POST, answered 200.
        try """
            import http.server, os, sys
            root = sys.argv[1]
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    with open(os.path.join(root, "received.txt"), "ab") as f:
                        f.write(body.replace(b"\\n", b" ") + b"\\n")
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
            with open(os.path.join(root, "port.tmp"), "w") as f:
                f.write(str(server.server_address[1]))
            os.rename(os.path.join(root, "port.tmp"), os.path.join(root, "port"))
            server.serve_forever()
            """.write(toFile: scratch.root + "/receiver.py", atomically: true, encoding: .utf8)
        let receiver = try Self.spawn("/usr/bin/python3", [scratch.root + "/receiver.py", scratch.root], output: scratch.root + "/receiver.log")
        defer { receiver.kill(SIGKILL) }
        #expect(waitFor(10) { FileManager.default.fileExists(atPath: scratch.root + "/port") }, "\(receiver.log())")
        let port = (try? String(contentsOfFile: scratch.root + "/port", encoding: .utf8)) ?? "0"
        try """
            identifier: test.failing
            kind: processing
            command: ["/bin/sh", "-c", "exit 3"]
            retry: {limit: 0}
            allowance: 5s
            on-failure: {webhook: "http://127.0.0.1:\(port)/hook"}
            """.write(toFile: scratch.root + "/jobs/failing.yaml", atomically: true, encoding: .utf8)
        try scratch.start("a", lease: "2s", store: conninfo)
        let received = { (try? String(contentsOfFile: scratch.root + "/received.txt", encoding: .utf8)) ?? "" }
        #expect(waitFor(15) { received().contains("test.failing") }, "no webhook received: \(scratch.logs())")
        #expect(!scratch.logs().contains("no HTTP client"), "\(scratch.logs())")
        scratch.nodes["a"]?.kill(SIGTERM)
        #expect(scratch.nodes["a"]?.wait(15) == 0, "a did not stop cleanly: \(scratch.logs())")
    }
}
