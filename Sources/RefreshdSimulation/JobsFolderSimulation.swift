import Foundation
import RefreshdConfig
import RefreshdCore

/// What `refreshd simulate --jobs DIR` simulates, put together in one place so that the command
/// line and the dashboard's Simulate page (`RefreshdWeb`) run the same code: the folder read by
/// `JobDirectory.load` (relative dates such as `earliest: +1h` read from the simulated start),
/// each job with its `simulate:` model, 7 days by default, and a seed taken from the start so
/// that the same folder and start give the same report.
package enum JobsFolderSimulation {
    /// The scenario of a jobs folder, or the folder's errors (each located at its file).
    ///
    /// - Parameters:
    ///   - start: the first simulated instant (the CLI's `--start`, default `comingMidnight`).
    ///   - days, seed: nil keeps the defaults (7 days; the start's stable hash).
    package static func scenario(jobs: String, start: Instant, zone: TimeZone, days: Int? = nil,
                                 seed: UInt64? = nil) -> Result<Scenario, ConfigErrors> {
        switch JobDirectory.load(jobs, now: start, timeZone: zone, accounts: nil) {
        case let .failure(errors):
            return .failure(errors)
        case let .success(loaded):
            var setup = Scenario(name: jobs, jobs: loaded.map(Scenario.Job.init),
                                 start: start, days: 7, seed: SchedulerCore.stableHash(start.iso8601),
                                 timeZone: zone.identifier)
            if let days { setup.days = days }
            if let seed { setup.seed = seed }
            return .success(setup)
        }
    }

    /// The next midnight in `zone` after `now`: where a simulation starts when none is given.
    package static func comingMidnight(in zone: TimeZone, now: Date = Date()) -> Instant {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let today = calendar.startOfDay(for: now)
        let next = calendar.date(byAdding: .day, value: 1, to: today) ?? today
        return Instant(milliseconds: Int64(next.timeIntervalSince1970 * 1000))
    }

    /// The command that repeats a simulation exactly.
    package static func reproduce(_ scenario: Scenario, path: String?, jobs: String) -> String {
        let source = path.map { "--scenario \($0)" } ?? "--jobs \(jobs)"
        return "refreshd simulate \(source) --start \(scenario.start.iso8601) --days \(scenario.days) --seed \(scenario.seed)"
    }
}
