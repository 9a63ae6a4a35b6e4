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
        let entries: [JobFileReader.Entry]
        do {
            entries = try JobFileReader.entries(of: directory)
        } catch {
            let reason = switch error {
            case .missing: "the folder does not exist"
            case .notAFolder: "it is a file"
            case .unreadable(let why): "the folder cannot be read (\(why))"
            }
            return .failure(ConfigErrors([ConfigError(
                file: directory, line: 1, column: 1,
                message: "expected a folder of job files (*.yaml), but \(reason)")]))
        }
        let projectRoot = PathText.projectRoot(of: directory)
        var jobs: [ParsedJob] = []
        var errors: [ConfigError] = []
        for entry in entries {
            let file = PathText.join(directory, entry.name)
            guard entry.isUTF8 else {
                errors.append(ConfigError(file: file, line: 1, column: 1,
                    message: "expected a UTF-8 file name, found bytes that are not UTF-8 (shown as \\xFF); rename the file"))
                continue
            }
            let yaml: String
            switch JobFileReader.contents(of: file) {
            case .success(let text): yaml = text
            case .failure(let failure):
                errors.append(ConfigError(file: file, line: failure.location.line, column: failure.location.column,
                                          message: failure.message))
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

}
