import Foundation
import RefreshdCore

/// Loads a folder of job files (`Jobs/*.yaml`, one job per file) into validated `JobConfig`s.
///
/// Every file is read and checked, and then the set as a whole (unique identifiers, pending
/// limits per namespace, over every job whose identifier could be read, also in files with
/// other errors); all problems of all files come back together, sorted by file and line, so
/// one `refreshd check` shows everything there is to fix. Nothing is returned unless
/// everything is valid: a half-loaded configuration would silently drop jobs.
package struct JobDirectory {
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
    ///   - accounts: how `user:` and `group:` are checked and resolved: this process's uid and
    ///     the machine's user database by default; nil reads them unresolved (the simulator,
    ///     which runs nothing as anyone, and commands that only show jobs).
    package static func load(
        _ directory: String,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration(),
        now: Instant = Instant(secondsSinceEpoch: Date().timeIntervalSince1970),
        timeZone: TimeZone = .current,
        accounts: Accounts? = .system
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
        return load(files: entries.map { ($0.name, $0.isUTF8) }, in: directory, searchPath: searchPath,
                    limits: limits, now: now, timeZone: timeZone, accounts: accounts)
    }

    /// Checks one job file (`refreshd check FILE`): its own errors, and the rules across files
    /// against the other job files of its folder, as if it were the file just added (it is the
    /// one refused in a clash). Errors of the other files are not reported; the result holds
    /// only this file's job. The project root is the file's folder's parent.
    package static func load(
        file path: String,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration(),
        now: Instant = Instant(secondsSinceEpoch: Date().timeIntervalSince1970),
        timeZone: TimeZone = .current,
        accounts: Accounts? = .system
    ) -> Result<[JobConfig], ConfigErrors> {
        let name = NSString(string: path).lastPathComponent
        let parent = NSString(string: path).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        // The other job files, for the checks across files; none when the folder cannot be listed.
        let siblings = ((try? JobFileReader.entries(of: directory)) ?? []).filter { $0.isUTF8 && $0.name != name }
        return load(files: siblings.map { ($0.name, $0.isUTF8) } + [(name, true)], in: directory,
                    focus: (name: name, shown: path), searchPath: searchPath, limits: limits, now: now, timeZone: timeZone,
                    accounts: accounts)
    }

    /// Reads and checks `files` (names in `directory`), then the set. With `focus`, only that
    /// file's errors and job are kept, it counts as the newest file, and messages name it as
    /// `shown` (the path as typed).
    private static func load(
        files: [(name: String, isUTF8: Bool)], in directory: String, focus: (name: String, shown: String)? = nil,
        searchPath: String?, limits: SchedulerConfiguration, now: Instant, timeZone: TimeZone, accounts: Accounts?
    ) -> Result<[JobConfig], ConfigErrors> {
        let projectRoot = PathText.projectRoot(of: directory)
        var jobs: [JobConfig] = []
        var identities: [JobIdentity] = []
        var errors: [ConfigError] = []
        for entry in files {
            let isFocus = focus?.name == entry.name
            let file = isFocus ? (focus?.shown ?? entry.name) : PathText.join(directory, entry.name)
            guard entry.isUTF8 else {
                errors.append(ConfigError(file: file, line: 1, column: 1,
                    message: "expected a UTF-8 file name, found bytes that are not UTF-8 (shown as \\xFF); rename the file"))
                continue
            }
            let read: JobFileReader.Contents
            switch JobFileReader.file(at: file) {
            case .success(let contents): read = contents
            case .failure(let failure):
                errors.append(ConfigError(file: file, line: failure.location.line, column: failure.location.column,
                                          message: failure.message))
                continue
            }
            var parser = JobFileParser(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                       now: now, defaultTimeZone: timeZone)
            parser.modified = isFocus ? Int64.max : read.modified
            parser.accounts = accounts
            let result = parser.parse(yaml: read.text)
            errors += result.errors
            if let job = result.job, focus == nil || isFocus { jobs.append(job) }
            if let identity = result.identity { identities.append(identity) }
        }
        errors += JobSetValidator(limits: limits).validate(identities)
        // A plain timeline job whose kind an instance listed in an `instances:` file would have
        // (the reload check, `RefreshRuntime.instanceKindClashes`, also knows the instances added
        // at run time).
        for clash in InstanceKind.clashes(jobs.map(\.spec), instances: { _ in [] }) {
            if let job = jobs.first(where: { $0.identifier == clash.job }) { errors.append(job.widgetKindError(clash.message)) }
        }
        if let focus { errors = errors.filter { $0.file == focus.shown } }
        guard errors.isEmpty else { return .failure(ConfigErrors(errors)) }
        return .success(jobs)
    }

    /// Parses a single job file's text. `file` is used in messages and in `JobConfig.file`;
    /// `projectRoot` is where relative commands resolve; `now` and `timeZone` are as for `load`.
    /// No cross-file checks are made.
    package static func parse(
        yaml: String, file: String, projectRoot: String,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        now: Instant = Instant(secondsSinceEpoch: Date().timeIntervalSince1970),
        timeZone: TimeZone = .current,
        accounts: Accounts? = .system
    ) -> Result<JobConfig, ConfigErrors> {
        var parser = JobFileParser(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                   now: now, defaultTimeZone: timeZone)
        parser.accounts = accounts
        let result = parser.parse(yaml: yaml)
        if let job = result.job { return .success(job) }
        return .failure(ConfigErrors(result.errors))
    }

}
