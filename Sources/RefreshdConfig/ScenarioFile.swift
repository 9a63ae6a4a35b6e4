import Foundation
import RefreshdCore

/// Scenario files (`Tests/Scenarios/*.yaml`): a simulation to run as a test, with the jobs,
/// device, faults and expectations it needs. `refreshd test` runs them. Reading one gives a
/// `ScenarioConfig`, plain data; the simulator makes the `Scenario` it runs of it.
///
/// They are read like job files (the same YAML composer and hostile-input limits, every error at
/// `file:line:column`, unknown keys with a suggestion), and their jobs are checked exactly as
/// `refreshd check` checks a job folder.
package enum ScenarioFile {
    /// Reads and checks the scenario file at `path`.
    ///
    /// - Parameters:
    ///   - defaultStart: the start when the file has no `start:` (see `defaultStart(now:)`).
    ///   - timeZone: the scenario's zone (an IANA name) when the file has no `timezone:`.
    ///   - searchPath: where bare command names are looked up (as for `JobDirectory.load`).
    ///   - limits: the pending-request limits per namespace the jobs must fit in.
    package static func load(
        path: String,
        defaultStart: Instant,
        timeZone: String = "UTC",
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration()
    ) -> Result<ScenarioConfig, ConfigErrors> {
        switch JobFileReader.contents(of: path, kind: .scenario) {
        case .failure(let failure):
            return .failure(ConfigErrors([ConfigError(file: path, line: failure.location.line,
                                                      column: failure.location.column, message: failure.message)]))
        case .success(let yaml):
            return parse(yaml: yaml, file: path, defaultStart: defaultStart, timeZone: timeZone,
                         searchPath: searchPath, limits: limits)
        }
    }

    /// `load(path:defaultStart:timeZone:...)` with the default zone as a `TimeZone` (by its identifier).
    package static func load(
        path: String,
        defaultStart: Instant,
        timeZone: TimeZone,
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration()
    ) -> Result<ScenarioConfig, ConfigErrors> {
        load(path: path, defaultStart: defaultStart, timeZone: timeZone.identifier, searchPath: searchPath, limits: limits)
    }

    /// Checks a scenario file's text. `file` is used in messages, for the default name, and as
    /// the place relative `jobs:` folders and inline jobs' relative commands are resolved from.
    package static func parse(
        yaml: String,
        file: String,
        defaultStart: Instant,
        timeZone: String = "UTC",
        searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
        limits: SchedulerConfiguration = SchedulerConfiguration()
    ) -> Result<ScenarioConfig, ConfigErrors> {
        ScenarioReader(file: file, searchPath: searchPath, limits: limits, defaultStart: defaultStart,
                       defaultTimeZone: timeZone).parse(yaml: yaml)
    }

    /// The start of a scenario without `start:`: `now` rounded up to the next midnight UTC
    /// (`now` itself if it is midnight).
    package static func defaultStart(now: Instant) -> Instant {
        let day: Int64 = 86_400_000
        let remainder = ((now.milliseconds % day) + day) % day
        return remainder == 0 ? now : Instant(milliseconds: now.milliseconds - remainder + day)
    }
}
