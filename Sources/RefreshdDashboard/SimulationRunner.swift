import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation

/// The Simulate page's runs: `refreshd simulate` of the jobs folder refreshd runs from, with the
/// command line's own code (`JobsFolderSimulation`), for up to `maxDays` days.
///
/// Bounded, because a page must not cost the scheduler or the machine: the simulation runs on a
/// thread of its own (never the libuv loop, never a SwiftNIO thread), one at a time (a request
/// for other settings meanwhile is answered 503; one for the same settings waits for it), and it
/// stops after `timeLimit` of wall time or `maxSteps` simulated events (the memory a report holds
/// grows with them), whichever comes first; the page then says where it stopped. The latest
/// result is kept, so the page's live refreshes and its picture reuse it while neither the
/// settings nor the folder changed (a `Scenario` is compared whole, models included).
package final class SimulationRunner: @unchecked Sendable {
    package static let maxDays = 31
    static let timeLimit: Duration = .seconds(10)
    static let maxSteps = 1_000_000

    package struct Settings: Sendable, Hashable {
        var days: Int
        var start: Instant?
        var seed: UInt64?

        package init(days: Int, start: Instant?, seed: UInt64?) { (self.days, self.start, self.seed) = (days, start, seed) }
    }

    /// One simulation's result, as the page and `/api/simulate` show it.
    package struct Result: Sendable {
        var scenario: Scenario
        var report: SimulationReport
        /// Nil when the whole span was simulated; otherwise why it stopped early.
        var stopped: String?
        var elapsedMilliseconds: Int64
        /// The report's picture, drawn once (on the runner's queue).
        var svg: String
    }

    /// The largest picture the page shows: the renderer draws one mark a run, and one job run
    /// every second for 31 days is an 18 MB SVG a browser does not draw.
    static let maxPictureBytes = 4 << 20

    /// `svg`, or when it is over `maxPictureBytes` a small picture that says so.
    static func bounded(_ svg: String, days: Int) -> String {
        let size = svg.utf8.count
        guard size > maxPictureBytes else { return svg }
        let mb = String(format: "%.1f", Double(size) / 1_048_576)
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1100\" height=\"60\" viewBox=\"0 0 1100 60\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"14\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><text x=\"10\" y=\"34\">Too many runs to draw: the picture of \(days) day\(days == 1 ? "" : "s") would be \(mb) MB (at most \(maxPictureBytes >> 20) MB is drawn). Simulate fewer days; the table below has every figure.</text></svg>"
    }

    private let lock = Lock()
    /// Guarded by `lock`.
    private var latest: Result?
    private var running: Scenario?
    private var waiting: [CheckedContinuation<Result, any Error>] = []
    private let queue = DispatchQueue(label: "refreshd.web.simulate")

    /// The result for `settings` on the folder as it is now: the kept one if nothing changed,
    /// otherwise a new run (or the run in progress for the same scenario).
    ///
    /// - Throws: `WebError.badRequest` for the folder's errors (each located), `.unavailable`
    ///   while a simulation of other settings runs.
    package func result(jobs: String, _ settings: Settings) async throws -> Result {
        let scenario = try await load(jobs: jobs, settings)
        enum Step { case ready(Result), wait, start, busy }
        let step: Step = lock.withLock {
            if let latest, latest.scenario == scenario { return .ready(latest) }
            if let running { return running == scenario ? .wait : .busy }
            running = scenario
            return .start
        }
        switch step {
        case let .ready(result):
            return result
        case .busy:
            throw WebError.unavailable("another simulation is running (one at a time, at most \(Self.timeLimit.components.seconds) s); try again in a moment")
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                // The run may have ended (or another begun) since the step was chosen: wait only
                // for a run of this very scenario, so every waiter gets the result it asked for.
                let ready: Swift.Result<Result, any Error>? = lock.withLock {
                    if running == scenario {
                        waiting.append(continuation)
                        return nil
                    }
                    if let latest, latest.scenario == scenario { return .success(latest) }
                    return .failure(WebError.unavailable("another simulation is running; try again in a moment"))
                }
                if let ready { continuation.resume(with: ready) }
            }
        case .start:
            let result = await run(scenario)
            let woken = lock.withLock { () -> [CheckedContinuation<Result, any Error>] in
                latest = result
                running = nil
                defer { waiting.removeAll() }
                return waiting
            }
            for continuation in woken { continuation.resume(returning: result) }
            return result
        }
    }

    /// Reads the folder as `simulate --jobs` does, on the runner's queue (reading may take a while).
    private func load(jobs: String, _ settings: Settings) async throws -> Scenario {
        guard (1...Self.maxDays).contains(settings.days) else {
            throw WebError.badRequest("days must be a whole number from 1 to \(Self.maxDays) (the page simulates at most a month; `refreshd simulate --days` goes further)")
        }
        let zone = TimeZone.current
        let start = settings.start ?? JobsFolderSimulation.comingMidnight(in: zone)
        let loaded: Swift.Result<Scenario, WebError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                switch JobsFolderSimulation.scenario(jobs: jobs, start: start, zone: zone, days: settings.days, seed: settings.seed) {
                case let .success(scenario):
                    continuation.resume(returning: .success(scenario))
                case let .failure(errors):
                    let count = errors.errors.count
                    continuation.resume(returning: .failure(.badRequest("cannot simulate: \(count) error\(count == 1 ? "" : "s") in \(jobs): "
                        + errors.errors.prefix(5).map { "\($0)" }.joined(separator: "; "))))
                }
            }
        }
        return try loaded.get()
    }

    /// Runs one simulation on the runner's queue, stopped at the time or step limit.
    private func run(_ scenario: Scenario) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async {
                let began = ContinuousClock.now
                let deadline = began + Self.timeLimit
                let limits = StopCheck(deadline: deadline, maxSteps: Self.maxSteps)
                let simulation = Simulation(scenario: scenario)
                simulation.stopRequested = { limits.shouldStop() }
                let report = simulation.run()
                let svg = Self.bounded(SimulationPicture.svg(report), days: scenario.days)
                let elapsed = ContinuousClock.now - began
                let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                continuation.resume(returning: Result(scenario: scenario, report: report, stopped: limits.reason, elapsedMilliseconds: ms, svg: svg))
            }
        }
    }
}

/// Asked before every simulated step: stops at the wall-clock deadline or the step limit, and
/// says which. Read on the runner's queue only (the simulation's thread).
final class StopCheck: @unchecked Sendable {
    let deadline: ContinuousClock.Instant
    let maxSteps: Int
    private(set) var steps = 0
    private(set) var reason: String?

    init(deadline: ContinuousClock.Instant, maxSteps: Int) {
        self.deadline = deadline
        self.maxSteps = maxSteps
    }

    func shouldStop() -> Bool {
        if reason != nil { return true }
        steps += 1
        if steps > maxSteps {
            reason = "it reached \(maxSteps) simulated events (the page's memory bound)"
        } else if steps % 256 == 0, ContinuousClock.now >= deadline {
            reason = "it ran for \(SimulationRunner.timeLimit.components.seconds) s (the page's time bound)"
        }
        return reason != nil
    }
}
