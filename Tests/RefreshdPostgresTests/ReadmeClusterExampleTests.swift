import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdPostgres
import Testing
import RefreshdTestSupport

/// README's "Running several nodes" example runs as written (issue 24: "a three-node example
/// that works as written"). The section's ```sh blocks are read from README.md and run line by
/// line, with two substitutions only: the private server the tests start stands in for the one
/// the example starts (its `initdb`/`pg_ctl` lines are skipped; `host=/tmp/pg dbname=postgres`
/// becomes the private server's socket folder and a fresh database: the same role `refreshd`,
/// trust authentication, a unix socket, as `PrivateServer` makes it), and `/tmp/` becomes a
/// folder of the test's own. The lines run in a copy of the project (its `Jobs/` and `Scripts/`,
/// as a user's checkout: the sample library is made there, not in the repository); each
/// `refreshd` line runs the built binary: the three `run` lines as nodes, the others (the
/// sample library, and the operating lines: `status`, `why`, the `ctl submit` the text gives)
/// to their end. The whole shipped `Jobs/` runs: the playlist staged, the widget published,
/// the download's live activity started, the heartbeat run.
@Suite(.serialized) struct ReadmeClusterExampleTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func theThreeNodeExampleRunsAsWritten() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Running several nodes\n").dropFirst().first?
            .components(separatedBy: "\n## ").first, "README.md has no section \"Running several nodes\"")
        let blocks = Self.shBlocks(section)
        #expect(blocks.count >= 2, "the section's ```sh blocks: \(blocks)")
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let database = try #require(conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7))
        let box = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-readme-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: box) }
        let project = box + "/project"
        try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
        for folder in ["Jobs", "Scripts"] { try FileManager.default.copyItem(atPath: Self.root + "/" + folder, toPath: project + "/" + folder) }
        let tag = "readme-\(UUID().uuidString.prefix(8))"
        func substituted(_ line: String) -> String {
            line.replacingOccurrences(of: "host=/tmp/pg dbname=postgres", with: "\u{1}")
                .replacingOccurrences(of: "/tmp/", with: box + "/")
                .replacingOccurrences(of: "\u{1}", with: "host=\(server.folder) dbname=\(database)")
        }
        var nodes: [String: Node] = [:]
        defer {
            for node in nodes.values { node.kill(SIGKILL) }
            for pid in processes(tagged: tag) { kill(pid, SIGKILL) }
        }
        func logs() -> String { nodes.keys.sorted().map { "\n--- \($0):\n" + (nodes[$0]?.log().suffix(3000) ?? "") }.joined() }

        // The first block: the server (the private one stands in), the jobs folder, three nodes.
        let setup = blocks[0].split(separator: "\n").map(String.init)
        #expect(setup.contains { $0.contains("initdb") && $0.contains("-U refreshd -A trust") },
                "the example's server is no longer the one the private server stands in for")
        #expect(setup.contains { $0.contains("--store \"host=/tmp/pg dbname=postgres user=refreshd\"") })
        for line in setup {
            let words = shellWords(substituted(line))
            guard let program = words.first else { continue }
            if line.contains("/usr/lib/postgresql/") || line.contains("chown postgres") { continue }
            if program == "refreshd", words.dropFirst().first == "run" {
                let name = try #require(words.firstIndex(of: "--node").map { words[$0 + 1] }, "README: \(line)")
                nodes[name] = try Node.start(Array(words.dropFirst()), environment: ["REFRESHD_TEST_TAG": tag],
                                             output: box + "/\(name).log", directory: project)
            } else if program == "refreshd" {
                let r = try Self.run(words, in: project)
                #expect(r.status == 0, "README: \(line): \(r.output)")
            } else {
                let r = try Self.shell(substituted(line), in: project)
                #expect(r.status == 0, "README: \(line): \(r.output)")
            }
        }
        #expect(nodes.keys.sorted() == ["a", "b", "c"], "the example's nodes: \(nodes.keys.sorted())")

        // A cluster of three: every node leads shards, and the heartbeat ran.
        let monitor = try RawConnection(conninfo)
        let leaders = {
            Set(((try? monitor.rows("""
                SELECT DISTINCT owner FROM refreshd.leases WHERE owner IS NOT NULL AND expires_at > clock_timestamp()
                """)) ?? []).map { $0[0] })
        }
        #expect(waitFor(40) { leaders() == ["a", "b", "c"] }, "not every node leads a shard: \(leaders()) \(logs())")
        #expect(waitFor(20) { nodes.values.contains { $0.log().contains("heartbeat 20") } }, "the heartbeat never ran: \(logs())")
        // Every kind of the shipped jobs, on whichever nodes lead their shards: the playlist
        // staged by the built-in action, the widget published from it, the download's activity.
        let shared = box + "/shared"
        #expect(waitFor(60) {
            FileManager.default.fileExists(atPath: shared + "/widgets/wallpaper/systemSmall.json")
                && ((try? FileManager.default.contentsOfDirectory(atPath: shared + "/activities")) ?? []).contains { $0.hasPrefix("pack-autumn-") }
        }, "the widget or the activity was not published: \(logs())")

        // The operating lines, against the nodes, as written.
        var operated = 0
        for block in blocks.dropFirst() {
            for line in block.split(separator: "\n").map(String.init) where line.hasPrefix("refreshd ") {
                let r = try Self.run(shellWords(substituted(line)), in: project)
                #expect(r.status == 0, "README: \(line): \(r.output)")
                if line.hasPrefix("refreshd status") { #expect(r.output.contains("a"), "README: \(line): \(r.output)") }
                if line.hasPrefix("refreshd why") {
                    #expect(r.output.contains("In the cluster") && r.output.contains("led by node"), "README: \(line): \(r.output)")
                }
                operated += 1
            }
        }
        // `ctl submit` is given in the text: the same command, as written.
        let submitLine = try #require(section.components(separatedBy: "`refreshd ctl submit ").dropFirst().first?
            .prefix { $0 != "`" }, "README: no `refreshd ctl submit ...` in the section")
        let submit = try Self.run(shellWords(substituted("refreshd ctl submit " + submitLine)), in: project)
        #expect(submit.status == 0 && submit.output.contains("submitted "), "README: ctl submit \(submitLine): \(submit.output)")
        #expect(operated >= 2)

        for node in nodes.values { node.kill(SIGTERM) }
        for (name, node) in nodes { #expect(node.wait(20) == 0, "node \(name) did not stop cleanly: \(logs())") }
        #expect(waitFor(5) { processes(tagged: tag).isEmpty }, "processes left: \(processes(tagged: tag))")
    }

    /// The ```sh blocks of `text`, in order.
    static func shBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [String]?
        var other = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current != nil {
                if trimmed == "```" {
                    blocks.append(current!.joined(separator: "\n"))
                    current = nil
                } else {
                    current!.append(line)
                }
            } else if trimmed.hasPrefix("```") {
                if other { other = false } else if trimmed == "```sh" { current = [] } else { other = true }
            }
        }
        return blocks
    }

    /// Runs `line` with /bin/sh in `directory`; status and output (stdout and stderr).
    static func shell(_ line: String, in directory: String) throws -> (status: Int32, output: String) {
        try run(["/bin/sh", "-c", "cd \"$0\" && \(line)", directory], binary: false, in: directory)
    }

    /// Runs `refreshd ARGUMENTS[1...]` (the built binary; `ARGUMENTS[0]` is "refreshd") in
    /// `directory`, or a program when `binary` is false; waits at most 60 s for it.
    /// posix_spawn, not Foundation's Process: test threads block signals (see `Node`).
    static func run(_ arguments: [String], binary: Bool = true, in directory: String = root) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-readme-out-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = binary ? ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory, Node.binary] + arguments.dropFirst() : arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw PrivateServer.Failure("posix_spawn \(argv[0]): \(String(cString: strerror(rc)))") }
        let process = Node(pid: pid, output: output)
        let status = process.wait(60) ?? -1
        return (status, process.log())
    }
}
