import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL 15 server for the tests: a temporary folder, `initdb` into it, and
/// `postgres` listening only on a unix socket in that folder (no TCP port to collide).
///
/// A small shell watchdog owns the server: it runs `initdb` and `postgres` (as the `postgres`
/// user when the tests run as root, since initdb refuses root), and reads commands on its
/// stdin (`stop`, `crash`, `start`), answering on its stdout. Its stdin is a pipe whose write end
/// only this process holds (close-on-exec, so no child inherits it): whenever this process ends,
/// however it ends (kill -9 included), the kernel closes it, the watchdog reads end-of-file,
/// stops the server and removes the folder. The server also gets a parent-death signal
/// (`setpriv --pdeathsig SIGQUIT`, set after the user change, which would clear it) from the
/// single-threaded watchdog, so killing the watchdog itself stops the server too. An atexit
/// hook closes the pipe and waits for the watchdog, so a normal exit leaves nothing behind.
///
/// One shared server per test process (`PrivateServer.shared`), started lazily; each test takes
/// a fresh database of it (`freshDatabase()`). Tests that stop the server start their own.
final class PrivateServer: @unchecked Sendable {
    static let binaries = "/usr/lib/postgresql/15/bin"

    /// The folder: data in `data/`, the socket `.s.PGSQL.5432` in the folder itself.
    let folder: String
    let watchdog: pid_t
    private var control: Int32
    private let answers: FileHandle
    private let lock = NSLock()
    private var databases = 0

    /// The shared server, started at first use; stopped at exit (atexit) or when the process dies.
    static let shared: Result<PrivateServer, any Error> = {
        let result = Result { try PrivateServer() }
        if case .success = result { atexit { PrivateServer.stopShared() } }
        return result
    }()

    private static func stopShared() {
        if case let .success(server) = shared { server.shutDown() }
    }

    /// Starts a server in a new temporary folder and waits until it accepts connections.
    init() throws {
        var template = Array((NSTemporaryDirectory() + "refreshd-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp: \(String(cString: strerror(errno)))") }
        folder = String(cString: made)
        let asUser: String
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else { throw Failure("no postgres user to run initdb as (root)") }
            guard chown(folder, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw Failure("chown \(folder): \(String(cString: strerror(errno)))")
            }
            asUser = "setpriv --reuid=postgres --regid=postgres --init-groups"
        } else {
            asUser = ""
        }
        let spawned = try Self.spawnWatchdog(folder: folder, asUser: asUser)
        watchdog = spawned.pid
        control = spawned.control
        answers = FileHandle(fileDescriptor: spawned.answers, closeOnDealloc: true)
        let answer = readAnswer()
        guard answer == "started" else {
            shutDown()
            throw Failure("the private server did not start: \(answer)")
        }
        try waitUntilReady()
    }

    /// A libpq connection string for `database` on this server.
    func conninfo(_ database: String = "postgres") -> String {
        "host=\(folder) dbname=\(database) user=refreshd"
    }

    /// Creates a new empty database and answers its connection string.
    func freshDatabase() throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "test_\(databases)"
        }
        try Self.execute("CREATE DATABASE \(name)", on: conninfo())
        return conninfo(name)
    }

    /// Fast shutdown (SIGINT), or immediate (`crash`: SIGQUIT, like a crash: recovery at the
    /// next start); returns when the server has exited.
    func stop(crash: Bool = false) throws {
        try command(crash ? "crash" : "stop", expecting: "stopped")
    }

    /// Starts the stopped server again and waits until it accepts connections.
    func start() throws {
        try command("start", expecting: "started")
        try waitUntilReady()
    }

    /// Closes the control pipe and waits for the watchdog to stop the server and remove the folder.
    func shutDown() {
        let fd = lock.withLock { () -> Int32 in
            defer { control = -1 }
            return control
        }
        guard fd >= 0 else { return }
        close(fd)
        var status: Int32 = 0
        while waitpid(watchdog, &status, 0) < 0 && errno == EINTR {}
    }

    private func command(_ line: String, expecting: String) throws {
        let fd = lock.withLock { control }
        let bytes = Array((line + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw Failure("cannot write to the watchdog") }
        let answer = readAnswer()
        guard answer == expecting else { throw Failure("watchdog answered '\(answer)' to \(line)") }
    }

    /// One line from the watchdog ("" at end of file).
    private func readAnswer() -> String {
        var line: [UInt8] = []
        while true {
            let byte = answers.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }

    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if PQping(conninfo() + " connect_timeout=2") == PQPING_OK { return }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
        throw Failure("the private server at \(folder) did not accept connections in 30 s: \(log.suffix(2000))")
    }

    /// The watchdog script: $1 the folder, $2 the binaries, $3 the user-change prefix.
    static let script = #"""
        dir=$1; bin=$2; as=$3; pid=
        trap '' INT TERM HUP
        run() {
            $as setpriv --pdeathsig SIGQUIT -- "$bin/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= \
                -c fsync=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=16MB \
                >>"$dir/server.log" 2>&1 </dev/null &
            pid=$!
        }
        alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]; }
        halt() {
            [ -n "$pid" ] || return 0
            # A test may have frozen the server (SIGSTOP) when its process died: thaw it first, or
            # a stopped backend keeps the shutdown (and this wait) from ever ending.
            pkill -CONT -P "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null
            kill "-$1" "$pid" 2>/dev/null
            n=0
            while alive "$pid" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
            alive "$pid" && kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null; pid=
        }
        if ! $as "$bin/initdb" -D "$dir/data" -U refreshd -A trust -E UTF8 --locale=C --no-sync \
            --no-instructions >"$dir/initdb.log" 2>&1 </dev/null; then
            echo "initdb failed: $(tr '\n' ' ' <"$dir/initdb.log")"; rm -rf "$dir"; exit 1
        fi
        run; echo started
        while read -r line; do
            case $line in
                stop) halt INT; echo stopped ;;
                crash) halt QUIT; echo stopped ;;
                start) run; echo started ;;
            esac
        done
        halt INT
        rm -rf "$dir"
        """#

    /// Spawns the watchdog with a control pipe (its stdin) and an answer pipe (its stdout); the
    /// ends kept here are close-on-exec.
    static func spawnWatchdog(folder: String, asUser: String) throws -> (pid: pid_t, control: Int32, answers: Int32) {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard systemPipe2(&input, O_CLOEXEC) == 0, systemPipe2(&output, O_CLOEXEC) == 0 else {
            throw Failure("pipe2: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of this process (not even its stderr): the watchdog lives as long as it,
        // and must not keep another test's pipe open (that test would wait for an end-of-file).
        guard systemAddCloseFrom(&actions, 3) == 0 else { throw Failure("posix_spawn_file_actions_addclosefrom_np") }
        let arguments = ["/bin/sh", "-c", script, "watchdog", folder, binaries, asUser]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
        close(input[0])
        close(output[1])
        guard rc == 0 else {
            close(input[1])
            close(output[0])
            throw Failure("posix_spawn /bin/sh: \(String(cString: strerror(rc)))")
        }
        return (pid, input[1], output[0])
    }

    /// Runs one administrative statement (no parameters: the tests build these names themselves).
    static func execute(_ sql: String, on conninfo: String) throws {
        guard let connection = PQconnectdb(conninfo) else { throw Failure("PQconnectdb: out of memory") }
        defer { PQfinish(connection) }
        guard PQstatus(connection) == CONNECTION_OK else {
            throw Failure("connecting to \(conninfo): \(String(cString: PQerrorMessage(connection)))")
        }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw Failure("\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}


/// glibc's pipe2 (Glibc's module map hides it behind _GNU_SOURCE): both ends close-on-exec
/// atomically, so no child spawned at that instant by another test inherits them.
@_silgen_name("pipe2")
func systemPipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), likewise hidden by Glibc's module map.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
func systemAddCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

/// Every process working in `folder` or below (a server and all its children work in its data
/// folder; their titles hide the command line) or whose command line mentions it.
func processes(under folder: String) -> [pid_t] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    return entries.compactMap { entry -> pid_t? in
        guard let pid = pid_t(entry), pid != getpid() else { return nil }
        if let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/cwd"),
           cwd == folder || cwd.hasPrefix(folder + "/") { return pid }
        guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
        let line = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
        return line.contains(folder) ? pid : nil
    }
}

/// The PostgreSQL processes of the server in `folder` (their executable is `postgres`): never a
/// refreshd node whose `--store` names the folder, nor another test's process. A test that
/// froze every process "under" the shared server's folder froze the cluster nodes of the tests
/// running beside it (a node stopped by another test looked paused at its own pause point).
func serverProcesses(under folder: String) -> [pid_t] {
    processes(under: folder).filter { pid in
        ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "").hasSuffix("/postgres")
    }
}

/// A plain libpq connection for a test's own statements (locks, counts), beside refreshd's.
final class RawConnection {
    private var connection: OpaquePointer?

    init(_ conninfo: String) throws {
        connection = PQconnectdb(conninfo)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            close()
            throw PrivateServer.Failure("connecting to \(conninfo): \(message)")
        }
    }

    deinit { close() }

    func close() {
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// Runs `sql` (no parameters) and answers the first column of its first row as text.
    @discardableResult
    func run(_ sql: String) throws -> String? {
        guard let connection else { throw PrivateServer.Failure("\(sql): the connection is closed") }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw PrivateServer.Failure("\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
        guard status == PGRES_TUPLES_OK, PQntuples(result) > 0, PQgetisnull(result, 0, 0) == 0 else { return nil }
        return String(cString: PQgetvalue(result, 0, 0))
    }

    func integer(_ sql: String) throws -> Int { Int(try run(sql) ?? "") ?? 0 }

    /// Runs a query (no parameters) and answers every row, each column as text ("" for NULL).
    func rows(_ sql: String) throws -> [[String]] {
        guard let connection else { throw PrivateServer.Failure("\(sql): the connection is closed") }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw PrivateServer.Failure("\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) == 1 ? "" : String(cString: PQgetvalue(result, row, column))
            }
        }
    }
}
