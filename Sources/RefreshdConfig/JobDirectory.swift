import Foundation
import RefreshdCore

/// Loads a folder of job files (`Jobs/*.yaml`, one job per file) into validated `JobConfig`s.
///
/// Every file is read and checked, and then the set as a whole (unique identifiers, pending
/// limits per namespace); all problems of all files come back together, sorted by file and
/// line, so one `refreshd check` shows everything there is to fix. Nothing is returned unless
/// everything is valid: a half-loaded configuration would silently drop jobs.
public struct JobDirectory {
    /// Loads `*.yaml` and `*.yml` in `directory` (not recursive), in file-name order.
    ///
    /// - Parameters:
    ///   - directory: the job folder, e.g. `Jobs`; its parent is the project root, against which
    ///     relative commands resolve and in which they run.
    ///   - searchPath: a `PATH`-style list where bare command names are looked up; defaults to the
    ///     process's `PATH`. Tests pass their own.
    ///   - limits: the pending-request limits per namespace that the job set must fit in.
    ///   - now: the load instant; calendar expressions that never elapse after it are refused.
    ///   - timeZone: the zone of calendar expressions in jobs without `timezone:` (the machine's).
    public static func load(
        _ directory: String,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration(),
        now: Instant = Instant(secondsSinceEpoch: Date().timeIntervalSince1970),
        timeZone: TimeZone = .current
    ) -> Result<[JobConfig], ConfigErrors> {
        let names: [String]
        do {
            names = try jobFileNames(in: directory)
        } catch {
            let reason = (error as? CocoaError)?.code == .fileReadNoSuchFile
                ? "the folder does not exist" : "the folder cannot be read (\(error.localizedDescription))"
            return .failure(ConfigErrors([ConfigError(
                file: directory, line: 1, column: 1,
                message: "expected a folder of job files (*.yaml), but \(reason)")]))
        }
        let projectRoot = PathText.projectRoot(of: directory)
        var jobs: [ParsedJob] = []
        var errors: [ConfigError] = []
        for name in names {
            let file = PathText.join(directory, name)
            guard let data = FileManager.default.contents(atPath: file) else {
                errors.append(ConfigError(file: file, line: 1, column: 1,
                                          message: "expected a readable job file, but it cannot be read"))
                continue
            }
            guard let yaml = String(data: data, encoding: .utf8) else {
                errors.append(ConfigError(file: file, line: 1, column: 1,
                                          message: "expected UTF-8 text, found bytes that are not"))
                continue
            }
            let parser = JobFileParser(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                       now: now, defaultTimeZone: timeZone)
            let result = parser.parse(yaml: yaml)
            errors += result.errors
            if let job = result.job { jobs.append(job) }
        }
        errors += JobSetValidator(limits: limits).validate(jobs)
        guard errors.isEmpty else { return .failure(ConfigErrors(errors)) }
        return .success(jobs.map(\.config))
    }

    /// Parses a single job file's text. `file` is used in messages and in `JobConfig.file`;
    /// `projectRoot` is where relative commands resolve; `now` and `timeZone` are as for `load`.
    /// No cross-file checks are made.
    public static func parse(
        yaml: String, file: String, projectRoot: String,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        now: Instant = Instant(secondsSinceEpoch: Date().timeIntervalSince1970),
        timeZone: TimeZone = .current
    ) -> Result<JobConfig, ConfigErrors> {
        let result = JobFileParser(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                   now: now, defaultTimeZone: timeZone).parse(yaml: yaml)
        if let job = result.job { return .success(job.config) }
        return .failure(ConfigErrors(result.errors))
    }

    /// The job file names of `directory`, sorted; throws when the folder cannot be listed.
    static func jobFileNames(in directory: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw CocoaError(.fileReadNoSuchFile)
        }
        guard isDirectory.boolValue else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "it is a file"]) }
        return try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) && !$0.hasPrefix(".") }
            .sorted()
    }
}
