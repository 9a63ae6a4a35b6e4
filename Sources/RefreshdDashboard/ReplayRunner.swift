import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation
import RefreshdStore

/// The Simulate page's replay (issue 34, item 3): a recorded period run again with the files
/// refreshd runs from and, for a what-if, with another folder's, by the command line's own code
/// (`Replay.read` and `Replay.compare`, what `simulate --replay` runs).
///
/// Bounded like the page's simulations: the state is read through a read-only SQLite connection
/// of its own and the period simulated on a thread of its own (never the libuv loop, never a
/// SwiftNIO thread), one replay at a time (another request meanwhile is answered 503), stopped
/// after `SimulationRunner.timeLimit` or `maxSteps` simulated events over both simulations. The
/// latest result is kept for `reuse`, so asking again (the page, then its JSON) does not
/// replay again.
package final class ReplayRunner: @unchecked Sendable {
    static let maxDays = SimulationRunner.maxDays
    static let reuse: Duration = .seconds(60)

    package struct Settings: Sendable, Hashable {
        var from: Instant
        var to: Instant
        /// The what-if folder, resolved (`WhatIfFolder.resolve`); nil: the replay alone.
        var whatIf: String?
        var seed: UInt64?

        package init(from: Instant, to: Instant, whatIf: String?, seed: UInt64?) {
            (self.from, self.to, self.whatIf, self.seed) = (from, to, whatIf, seed)
        }
    }

    package struct Result: Sendable {
        var settings: Settings
        var outcome: Replay.Outcome
        /// Nil when the whole period was simulated; otherwise why it stopped early.
        var stopped: String?
        var elapsedMilliseconds: Int64
        /// The paired lanes' picture (`simulate --replay --svg`), bounded.
        var svg: String
    }

    private let lock = Lock()
    /// Guarded by `lock`.
    private var latest: (Result, ContinuousClock.Instant)?
    private var running = false
    private let queue = DispatchQueue(label: "refreshd.web.replay")

    /// The replay of `settings` over the state in `state`, with the jobs of `jobs`.
    ///
    /// - Throws: `WebError.badRequest` for a period out of bounds or a folder's errors,
    ///   `.notFound` when nothing was recorded in the period, `.unavailable` while another
    ///   replay runs or when the state cannot be read.
    package func result(state: String, jobs: String, _ settings: Settings) async throws -> Result {
        guard settings.to > settings.from else {
            throw WebError.badRequest("the period \(settings.from.iso8601)..\(settings.to.iso8601) is empty: from must come before to")
        }
        guard settings.to.duration(since: settings.from) <= .seconds(Int64(Self.maxDays) * 86_400) else {
            throw WebError.badRequest("the page replays at most \(Self.maxDays) days (`refreshd simulate --replay` replays more)")
        }
        enum Step { case kept(Result), busy, start }
        let step: Step = lock.withLock {
            if let (result, at) = latest, result.settings == settings, ContinuousClock.now - at < Self.reuse { return .kept(result) }
            if running { return .busy }
            running = true
            return .start
        }
        switch step {
        case let .kept(result): return result
        case .busy:
            throw WebError.unavailable("another replay is running (one at a time, at most \(SimulationRunner.timeLimit.components.seconds) s); try again in a moment")
        case .start: break
        }
        defer { lock.withLock { running = false } }
        let outcome: Swift.Result<Result, WebError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Self.run(state: state, jobs: jobs, settings)) }
        }
        let result = try outcome.get()
        lock.withLock { latest = (result, ContinuousClock.now) }
        return result
    }

    /// Reads the state, loads the folders and replays, on the runner's queue.
    private static func run(state: String, jobs: String, _ settings: Settings) -> Swift.Result<Result, WebError> {
        let began = ContinuousClock.now
        let (from, to) = (settings.from, settings.to)
        let recorded: Replay.Recorded
        do {
            let store = try StateStore.open(directory: state, readOnly: true)
            defer { store.close() }
            recorded = try Replay.read(store, from: from, to: to)
        } catch {
            return .failure(.unavailable("the state in \(state) could not be read: \(error)"))
        }
        guard !recorded.isEmpty(from: from, to: to) else {
            return .failure(.notFound("nothing recorded in \(state) between \(from.iso8601) and \(to.iso8601) to replay"))
        }
        let zone = TimeZone.current
        func load(_ folder: String) -> Swift.Result<Scenario, WebError> {
            JobsFolderSimulation.scenario(jobs: folder, start: from, zone: zone).mapError { errors in
                let count = errors.errors.count
                return .badRequest("cannot replay: \(count) error\(count == 1 ? "" : "s") in \(folder): "
                    + errors.errors.prefix(5).map { "\($0)" }.joined(separator: "; "))
            }
        }
        let base: Scenario
        var whatIf: (jobs: String, scenario: Scenario)?
        do {
            base = try load(jobs).get()
            if let other = settings.whatIf { whatIf = (other, try load(other).get()) }
        } catch {
            return .failure(error)
        }
        let limits = StopCheck(deadline: began + SimulationRunner.timeLimit, maxSteps: SimulationRunner.maxSteps)
        let outcome = Replay.compare(recorded, ran: base, whatIf: whatIf, from: from, to: to, seed: settings.seed, zone: zone,
                                     stopRequested: { limits.shouldStop() })
        let days = max(1, Int((to.milliseconds - from.milliseconds + 86_399_999) / 86_400_000))
        let svg = SimulationRunner.bounded(SimulationPicture.svg(outcome.paired), days: days)
        let elapsed = ContinuousClock.now - began
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        return .success(Result(settings: settings, outcome: outcome, stopped: limits.reason, elapsedMilliseconds: ms, svg: svg))
    }
}

/// The what-if folder a request names, checked before anything reads it: a folder under the
/// one that holds the jobs folder refreshd runs from (`/etc/refreshd/jobs-next` beside
/// `/etc/refreshd/jobs`), relative to that one or absolute, with no `..` and no symbolic link
/// out of it. refreshd may read there (its own files are there); elsewhere is refused, so the
/// token opens no other part of the machine's files to the replay's error messages.
package enum WhatIfFolder {
    static let maxBytes = 1024

    /// The folder's real path.
    ///
    /// - Throws: `WebError.badRequest` naming the field and what is allowed.
    package static func resolve(_ text: String, jobsFolder: String) throws -> String {
        guard let root = realPath(URL(fileURLWithPath: jobsFolder).deletingLastPathComponent().path) else {
            throw WebError.unavailable("the folder of the jobs folder \(jobsFolder) cannot be resolved")
        }
        let allowed = "a folder under \(root) (where the jobs folder \(jobsFolder) is), relative to it or absolute"
        guard !text.isEmpty, text.utf8.count <= maxBytes, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw WebError.badRequest("jobs: expected \(allowed), of 1 to \(maxBytes) bytes without control characters")
        }
        guard !text.split(separator: "/").contains("..") else {
            throw WebError.badRequest("jobs: \(EchoText.quoted(text, limit: 80)) goes up with “..”: expected \(allowed)")
        }
        let path = text.hasPrefix("/") ? text : root + "/" + text
        guard let real = realPath(path) else {
            throw WebError.badRequest("jobs: there is no folder at \(EchoText.quoted(path, limit: 200)): expected \(allowed)")
        }
        guard real.hasPrefix(root == "/" ? "/" : root + "/"), real != root else {
            throw WebError.badRequest("jobs: \(EchoText.quoted(text, limit: 80)) is \(EchoText.quoted(real, limit: 200)), outside the allowed place: expected \(allowed)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw WebError.badRequest("jobs: \(EchoText.quoted(real, limit: 200)) is not a folder: expected \(allowed)")
        }
        return real
    }

    /// The path with every symbolic link, `.` and `..` resolved; nil when it does not exist.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
