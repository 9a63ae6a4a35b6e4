import Foundation

/// Runs the built `refreshd` binary (it sits next to the test bundle in the build folder).
///
/// Spawned with posix_spawn and reaped with waitpid, not Foundation's Process: test threads
/// block signals, so Process never hears SIGCHLD and cannot tell that a child ended. The child
/// inherits that blocked mask on purpose: refreshd must cope with the mask it is started with.
enum CLI {
    static var binary: String { built("refreshd") }

    /// The path of an executable the build put beside `refreshd` (e.g. an example).
    static func built(_ name: String) -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent(name).path
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs to completion (killed after `timeout`) and captures output. `directory` is the
    /// working directory (default: the test's); `via` is a command that runs the binary
    /// (`["/usr/bin/setpriv", "--reuid=nobody", ...]`), given as an absolute path.
    static func run(_ arguments: [String], timeout: Double = 30, directory: String? = nil,
                    via: [String] = [], executable: String = CLI.binary) throws -> Result {
        let p = try start(arguments, directory: directory, via: via, executable: executable)
        defer { p.cleanUp() }
        let status = p.wait(timeout: timeout) ?? -1
        return Result(status: status, stdout: p.output(), stderr: p.errors())
    }

    /// Starts the binary in the background; the caller stops it.
    static func start(_ arguments: [String], environment extra: [String: String] = [:],
                      directory workingDirectory: String? = nil, via: [String] = [],
                      executable: String = CLI.binary) throws -> Running {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-out-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, dir + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, dir + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Glibc's posix_spawn_file_actions_addchdir_np is not visible to Swift: a shell changes
        // directory, then execs the rest.
        let chdir = workingDirectory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0] } ?? []
        let argv = chdir + via + [executable] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        var cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in cEnv { free(e) } }
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        return Running(pid: pid, directory: dir)
    }

    final class Running: @unchecked Sendable {
        let pid: pid_t
        let directory: String
        private var status: Int32?

        init(pid: pid_t, directory: String) {
            self.pid = pid
            self.directory = directory
        }

        func output() -> String { (try? String(contentsOfFile: directory + "/stdout", encoding: .utf8)) ?? "" }
        func errors() -> String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }

        func signal(_ number: Int32) { if status == nil { kill(pid, number) } }

        /// Waits for exit; SIGKILLs it after `timeout`. Returns the exit status (nil if it had to
        /// be killed, or 128+signal if a signal ended it).
        @discardableResult
        func wait(timeout: Double = 15) -> Int32? {
            if let status { return status }
            let end = Date().addingTimeInterval(timeout)
            var raw: Int32 = 0
            while Date() < end {
                if waitpid(pid, &raw, WNOHANG) == pid { status = decode(raw); return status }
                usleep(10_000)
            }
            kill(pid, SIGKILL)
            waitpid(pid, &raw, 0)
            status = -1
            return nil
        }

        private func decode(_ raw: Int32) -> Int32 {
            let signal = raw & 0x7f
            return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        }

        /// Kills it if still running and removes the captured output.
        func cleanUp() {
            if status == nil { kill(pid, SIGKILL); wait(timeout: 5) }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

/// A temporary project: Jobs/ and a state directory, removed by `remove()`.
struct Sandbox {
    let root: String
    var jobs: String { root + "/Jobs" }
    var state: String { root + "/state" }

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-cli-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: root + "/Jobs", withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws {
        try text.write(toFile: jobs + "/" + name, atomically: true, encoding: .utf8)
    }

    /// An executable script at `path` under the sandbox's root (its folder made as needed).
    func writeScript(_ path: String, _ text: String) throws {
        let file = root + "/" + path
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o755)
    }

    func read(_ path: String) -> String? { try? String(contentsOfFile: root + "/" + path, encoding: .utf8) }

    /// The pid a job wrote into `path`, once the file holds a whole one (a shell's `echo $$ > f`
    /// makes the file empty before it writes: read then, it is no pid yet), within `timeout`.
    func waitForPID(_ path: String, timeout: Double = 10) -> Int32? {
        var pid: Int32?
        _ = waitFor(timeout: timeout) {
            pid = read(path).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return pid != nil
        }
        return pid
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// `refreshd status --json`, parsed.
    func status() -> [String: Any]? {
        guard let r = try? CLI.run(["status", "--state", state, "--json"]), r.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        else { return nil }
        return object
    }

    /// (identifier, outcome) of each recorded run, oldest first.
    func runs() -> [(String, String)] {
        guard let runs = status()?["runs"] as? [[String: Any]] else { return [] }
        return runs.reversed().compactMap { r in
            guard let id = r["identifier"] as? String, let outcome = r["outcome"] as? String else { return nil }
            return (id, outcome)
        }
    }
}

func waitFor(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

func processIsGone(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
}
