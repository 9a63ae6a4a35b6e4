import Foundation
import RefreshdTestSupport
import Testing

/// Runs the built `refreshd` (beside the test bundle) in the background, with posix_spawn and
/// waitpid as refreshdCLITests does (test threads block signals, so Foundation's Process never
/// hears SIGCHLD).
final class Daemon: @unchecked Sendable {
    let pid: pid_t
    let directory: String
    private var status: Int32?

    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("refreshd").path
    }

    init(_ arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-web-out-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = [Self.binary] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in cEnv { free(e) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        self.pid = pid
    }

    /// Runs to its end (at most `timeout` s) and returns (status, stderr).
    static func run(_ arguments: [String], timeout: Double = 30) throws -> (Int32, String) {
        let daemon = try Daemon(arguments)
        defer { daemon.cleanUp() }
        let status = daemon.wait(timeout: timeout) ?? -1
        return (status, daemon.errors())
    }

    func errors() -> String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }

    /// The port of the `dashboard at http://HOST:PORT/` log line, once logged.
    func dashboardPort(timeout: Double = 20) -> Int? {
        var port: Int?
        _ = waitFor(timeout: timeout) {
            guard let range = errors().range(of: "dashboard at http://") else { return false }
            let rest = errors()[range.upperBound...]
            guard let slash = rest.firstIndex(of: "/"), let colon = rest[..<slash].lastIndex(of: ":") else { return false }
            port = Int(rest[rest.index(after: colon)..<slash])
            return port != nil
        }
        return port
    }

    @discardableResult
    func wait(timeout: Double = 15) -> Int32? {
        if let status { return status }
        let end = Date().addingTimeInterval(timeout)
        var raw: Int32 = 0
        while Date() < end {
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                return status
            }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &raw, 0)
        status = -1
        return nil
    }

    /// SIGTERM, a wait, then SIGKILL if needed; removes the captured output.
    func cleanUp() {
        if status == nil { kill(pid, SIGTERM); if wait(timeout: 15) == nil { _ = status } }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A temporary project folder (Jobs/, state/), removed by `remove()`.
struct Project {
    let root: String
    var jobs: String { root + "/Jobs" }
    var state: String { root + "/state" }

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-web-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: root + "/Jobs", withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String, mode: Int16 = 0o644) throws {
        let path = name.hasPrefix("/") ? name : root + "/" + name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode_t(mode))
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

func waitFor(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A small PNG (48x32, two colours) for a widget's rendition.
enum Fixture {
    static let png = Data(base64Encoded: pngBase64)!
    static let pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAADAAAAAgCAIAAADbtmxLAAAAR0lEQVR42mOQqziBFX1YpYEV0Vo9w6iDRh006qAR56CBshiX+lEHjTpo1EEjz0GjJfWog0YdNOqg0fbQaNUx6qBRB41wBwEAZtVgiNPfcpIAAAAASUVORK5CYII="

    /// A timeline provider whose entry names `rendition` (relative to the shared container).
    static func provider(rendition: String) -> String {
        """
        #!/bin/sh
        now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        later=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
        echo "{\\"entries\\":[{\\"date\\":\\"$now\\",\\"content\\":{\\"rendition\\":\\"\(rendition)\\"}},{\\"date\\":\\"$later\\",\\"content\\":{\\"rendition\\":\\"\(rendition)\\"}}],\\"policy\\":\\"atEnd\\"}" >&3
        """
    }

    static func widgetJob(_ script: String) -> String {
        """
        identifier: web.picture
        kind: timeline
        command: ["\(script)"]
        allowance: 20s
        widget:
          kind: picture
          families: [systemMedium]
          budget: 20
          min-reload-interval: 0s
        """
    }

    /// A job that runs 3 s, printing a line before and after; pending an hour ahead, so
    /// `ctl simulate-launch` starts it.
    static let sleeper = """
        identifier: web.sleeper
        kind: processing
        command: ["sh", "-c", "echo working on it; echo '{\\"log\\": \\"halfway\\"}' >&3; sleep 3; echo done"]
        earliest: +1h
        allowance: 30s
        resubmit: {after: 1h}
        """

    static let failing = """
        identifier: web.failing
        kind: processing
        command: ["sh", "-c", "echo 'cannot reach <upstream> & friends' >&2; exit 3"]
        earliest: +1s
        allowance: 10s
        resubmit: {after: 1h}
        """

    static let nightly = """
        identifier: web.nightly
        kind: app-refresh
        command: ["true"]
        resubmit: {calendar: "*-*-* 04:00", timezone: Europe/Paris}
        accuracy: 10m
        allowance: 60s
        """

    /// A template of one parameter; the instance `bob` fails, the others succeed.
    static let template = """
        identifier: web.feed
        kind: processing
        template: true
        parameters: [user]
        command: ["sh", "-c", "echo feed for {user}; test {user} != bob"]
        allowance: 10s
        resubmit: {after: 1h}
        """

    /// Every second: the test checks that its launches stay on time under hostile requests.
    static let tick = """
        identifier: web.tick
        kind: processing
        command: ["true"]
        earliest: +1s
        allowance: 10s
        resubmit: {after: 1s}
        """
}
