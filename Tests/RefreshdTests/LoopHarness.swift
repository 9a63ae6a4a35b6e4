import Foundation
import Logging
@testable import Refreshd
import RefreshdCore
import RefreshdStore

/// Runs a real `RefreshScheduler` (real libuv loop) on its own thread for a test, captures its
/// log lines, and tears everything down: the loop stops, the thread ends, the temp dir goes.
final class LoopHarness: @unchecked Sendable {
    let directory: String
    let scheduler: RefreshScheduler
    let lines = LineSink()
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private(set) var runError: Error?

    init(directory: String? = nil, configuration: SchedulerConfiguration = .init(),
         probe: ConditionsProbe = ConditionsProbe(), fallback: Duration = .seconds(60),
         clock: WallClockSource = .system, runCgroups: Bool = true,
         register: (RefreshScheduler) -> Void = { _ in }) throws {
        self.directory = directory ?? TempDirectory.make()
        let sink = lines
        let logger = Logger(label: "test") { _ in CapturingLogHandler(sink: sink) }
        scheduler = try RefreshScheduler(options: .init(
            stateDirectory: self.directory + "/state", configuration: configuration,
            conditionsProbe: probe, conditionsFallbackInterval: fallback, logger: logger, clock: clock,
            runCgroups: runCgroups))
        register(scheduler)
    }

    func start() {
        let t = Thread { [self] in
            do { try scheduler.run() } catch { runError = error }
            finished.signal()
        }
        thread = t
        t.start()
    }

    /// Polls (real processes take real time) until `condition` holds or `timeout` passes.
    ///
    /// 30 s by default. The old 5 s failed once, in one full-suite run of many: the first
    /// launch of `stepBackDoesNotRunASlotTwice` did not come in time, though the test passes
    /// in 0.45 s alone and under CPU load. Every launch waits for its commit
    /// (`synchronous=FULL`, an fsync), and while the whole suite writes, a shared virtual disk
    /// is the likely stall. A poll returns as soon as the condition holds, so only a failing
    /// test waits the whole time; a timing rule is asserted with its own `timeout`.
    @discardableResult
    func wait(timeout: Double = 30, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }

    /// Graceful stop; returns false if the loop did not end in time.
    @discardableResult
    func stop(timeout: Double = 10) -> Bool {
        scheduler.stop()
        guard thread != nil else { return true }
        return finished.wait(timeout: .now() + timeout) == .success
    }

    /// Outcomes recorded in the state file, oldest first.
    func outcomes() -> [String: [Outcome?]] {
        guard let store = try? StateStore.open(directory: directory + "/state", readOnly: true),
              let runs = try? store.recentRuns(limit: 1000) else { return [:] }
        var result: [String: [Outcome?]] = [:]
        for run in runs.reversed() { result[run.identifier, default: []].append(run.outcome) }
        return result
    }

    func runs() -> [RunRecord] {
        guard let store = try? StateStore.open(directory: directory + "/state", readOnly: true) else { return [] }
        return ((try? store.recentRuns(limit: 1000)) ?? []).reversed()
    }

    func removeDirectory() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Thread-safe collection of log lines.
final class LineSink: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.lock(); storage.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return storage }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

struct CapturingLogHandler: LogHandler {
    let sink: LineSink
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: Logging.LogEvent) { sink.append("\(event.level) \(event.message)") }
}

enum TempDirectory {
    static func make() -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("refreshd-test-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Whether a process is gone (or a zombie waiting for its reaper).
func processIsGone(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
}
