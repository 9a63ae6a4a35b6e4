import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Helpers shared by the config tests: parsing with a fixed PATH, and temporary folders that are
/// always removed.
enum TestSupport {
    /// A PATH that has `true`, `sh` and `env` on every Linux and macOS machine.
    static let searchPath = "/usr/bin:/bin"

    /// The load instant of every parse: Saturday 2026-11-21T12:00:00Z, so calendar results are fixed.
    static let now = Instant(milliseconds: 1_795_262_400_000)

    /// The machine zone the tests pretend to have (jobs without `timezone:`).
    static let machineZone = TimeZone(identifier: "Asia/Tokyo")!

    static func zone(_ identifier: String) -> TimeZone { TimeZone(identifier: identifier)! }

    /// `2026-11-22T03:00:00Z` as an instant (the form must be exact).
    static func instant(_ iso: String, sourceLocation: SourceLocation = #_sourceLocation) -> Instant {
        guard case .success(let instant) = ISODateParser.parse(iso) else {
            Issue.record("bad test date \(iso)", sourceLocation: sourceLocation)
            return Instant(milliseconds: 0)
        }
        return instant
    }

    /// Parses `yaml` as `Jobs/test.yaml` in a project rooted at `/`, loaded at `now` in `machineZone`.
    static func parse(_ yaml: String, file: String = "Jobs/test.yaml") -> Result<JobConfig, ConfigErrors> {
        JobDirectory.parse(yaml: yaml, file: file, projectRoot: "/", searchPath: searchPath,
                           now: now, timeZone: machineZone)
    }

    /// The errors of a file that must fail, as `line:column: message` strings.
    static func errors(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> [ConfigError] {
        switch parse(yaml) {
        case .success(let config):
            Issue.record("expected errors, parsed \(config.identifier)", sourceLocation: sourceLocation)
            return []
        case .failure(let errors):
            return errors.errors
        }
    }

    /// The single error of a file that must fail with exactly one.
    static func onlyError(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigError? {
        let all = errors(yaml, sourceLocation: sourceLocation)
        #expect(all.count == 1, "expected one error, got \(all)", sourceLocation: sourceLocation)
        return all.first
    }

    /// The job of a file that must parse.
    static func config(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> JobConfig? {
        switch parse(yaml) {
        case .success(let config): return config
        case .failure(let errors):
            Issue.record("expected a job, got errors:\n\(errors)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Runs `body` with a fresh folder under the temporary directory, removing it afterwards.
    static func withTemporaryDirectory<T>(_ body: (String) throws -> T) rethrows -> T {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("refreshd-config-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url.path)
    }

    /// Writes `text` to `directory/name`, creating folders on the way, with the given permissions.
    @discardableResult
    static func write(_ text: String, to name: String, in directory: String, permissions: Int = 0o644) -> String {
        let path = directory + "/" + name
        let parent = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                       attributes: [.posixPermissions: permissions])
        return path
    }
}

extension ConfigError {
    /// `line:column` for compact assertions.
    var position: String { "\(line):\(column)" }
}
