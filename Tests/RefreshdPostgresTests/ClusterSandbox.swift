import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdPostgres

/// What a test of real cluster nodes sets up, once: a fresh database of the shared private
/// server with `shards` shards, a temporary folder with `jobs/`, a tag carried by every process
/// the test starts (`processes(tagged:)`), and the nodes, each with its own state folder and log.
/// `close()` thaws and kills every node and every tagged process and removes the folder, pass or
/// fail.
final class ClusterSandbox {
    let server: PrivateServer
    /// The fresh database (empty when `shards` was nil).
    let conninfo: String
    let root: String
    let tag: String
    var nodes: [String: Node] = [:]

    init(_ name: String, shards: Int?) throws {
        server = try PrivateServer.shared.get()
        if let shards {
            conninfo = try server.freshDatabase()
            try PostgresDatabase(connection: conninfo, shardCount: shards).close()
        } else {
            conninfo = ""
        }
        let suffix = UUID().uuidString.prefix(8)
        root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-\(name)-\(suffix)").path
        tag = "\(name)-\(suffix)"
        try FileManager.default.createDirectory(atPath: root + "/jobs", withIntermediateDirectories: true)
    }

    /// Writes a job file into `jobs/`.
    func job(_ file: String, _ text: String) throws {
        try text.write(toFile: root + "/jobs/" + file, atomically: true, encoding: .utf8)
    }

    /// Starts node `name` (NODE=name in its environment) on `store` (default: the database).
    /// `directory`: the node's working directory (default: the test's), where relative paths
    /// of job files resolve.
    func start(_ name: String, lease: String, store: String? = nil, environment: [String: String] = [:],
               directory: String? = nil, extra: [String] = []) throws {
        nodes[name] = try Node.start(
            ["run", "--jobs", root + "/jobs", "--state", root + "/state-" + name, "--shared", root + "/shared",
             "--store", store ?? conninfo, "--node", name, "--lease", lease] + extra,
            environment: environment.merging(["NODE": name, "REFRESHD_TEST_TAG": tag]) { $1 }, output: root + "/\(name).log",
            directory: directory)
    }

    /// Runs `refreshd ARGS` to its end: its exit status and its output (stdout and stderr).
    func cli(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        let output = root + "/cli-\(UUID().uuidString.prefix(8)).out"
        let process = try Node.start(arguments, environment: [:], output: output)
        let status = process.wait(30)
        return (status, process.log())
    }

    /// The end of every node's log, for a failure's message.
    func logs() -> String {
        nodes.keys.sorted().map { "\n--- \($0):\n" + (nodes[$0]?.log().suffix(3000) ?? "") }.joined()
    }

    deinit { close() }

    func close() {
        for node in nodes.values {
            node.kill(SIGCONT)
            node.kill(SIGKILL)
        }
        for pid in processes(tagged: tag) { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: root)
    }
}
