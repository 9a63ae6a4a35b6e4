import Foundation
import Testing
import Logging
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import RefreshdSimulation

/// The two hosts the runtime runs on, for tests that must pass on both.
enum HostKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case libuv
    case simulated
    var testDescription: String { rawValue }
}

/// What a job's command does, rendered for both hosts: a real `/bin/sh` script under libuv, a
/// modelled process in simulation.
struct Work: Sendable, Hashable {
    var duration: Duration = .milliseconds(10)
    var exit: Int32 = 0
    var ignoresTerminate = false
    /// Lines written to the results channel (fd 3) before the run sleeps its duration. `{+N}` in
    /// a line is the instant N seconds after the run started, as ISO 8601 (whole seconds).
    var results: [String] = []

    var command: CommandJob {
        let seconds = Double(duration.wholeMilliseconds) / 1000
        let trap = ignoresTerminate ? "trap '' TERM; " : ""
        var script = "\(trap)now=$(date +%s); "
        for line in results {
            var text = line.replacingOccurrences(of: "'", with: "'\\''")
            for n in -5...5 where text.contains("{+\(n)}") {
                text = text.replacingOccurrences(of: "{+\(n)}", with: "'\"$(date -u -d @$((now + \(n))) +%Y-%m-%dT%H:%M:%SZ)\"'")
            }
            script += "printf '%s\\n' '\(text)' >&3; "
        }
        return CommandJob(argv: ["/bin/sh", "-c", script + "sleep \(seconds); exit \(exit)"])
    }

    func behaviour(startedAt start: Instant) -> SimulatedHost.Behaviour {
        let whole = Instant(milliseconds: start.milliseconds / 1000 * 1000)
        let lines = results.map { line in
            var text = line
            for n in -5...5 { text = text.replacingOccurrences(of: "{+\(n)}", with: (whole + .seconds(n)).iso8601.replacingOccurrences(of: ".000Z", with: "Z")) }
            return text
        }
        return SimulatedHost.Behaviour(duration: duration, exit: .exited(exit), ignoresTerminate: ignoresTerminate, results: lines)
    }
}

/// One runtime on one host, with what the tests need: jobs, time passing, restarts, clock steps.
protocol HostHarness: AnyObject {
    var kind: HostKind { get }
    var runtime: RefreshRuntime { get }
    var now: Instant { get }
    /// Declares a job (before `start`, and again after each restart).
    func job(_ definition: TaskDefinition, _ work: Work)
    /// Loads a job spec (a widget's timeline job) at start, as the daemon does; `work` is what
    /// each of its runs (each family's provider call) does.
    func spec(_ spec: JobSpec, _ work: Work)
    /// A file the machines published into the shared container, if it exists.
    func published(_ path: String) -> String?
    func start() throws
    /// Lets time pass until `condition` holds (real time polled, or virtual time stepped).
    @discardableResult
    func wait(_ limit: Duration, until condition: () -> Bool) -> Bool
    /// Lets `span` pass with the runtime running.
    func pass(_ span: Duration)
    /// Graceful stop, `downtime` passes, start again on the same state.
    func restart(downtime: Duration) throws
    /// Steps the wall clock and delivers the notice the timerfd would.
    func stepClock(by delta: Duration)
    /// The recorded runs, oldest first.
    func runs() -> [RunRecord]
    func finish()
}

extension HostHarness {
    func outcomes(_ identifier: String) -> [Outcome?] {
        runs().filter { $0.identifier == identifier }.map(\.outcome)
    }

}

/// The real loop on a thread, real processes, a SQLite file, a shiftable wall clock.
final class LibuvHarness: HostHarness, @unchecked Sendable {
    let kind = HostKind.libuv
    let directory = TempDirectory.make()
    let clock = ClockWatchTests.ShiftableClock()
    var jobs: [(TaskDefinition, Work)] = []
    var specs: [JobSpec] = []
    var scheduler: RefreshScheduler?
    var thread: Thread?
    let finished = DispatchSemaphore(value: 0)
    let lines = LineSink()
    /// Where conditions are read, and how often the runtime has them read again.
    var conditionsProbe = ConditionsProbe()
    var conditionsReread: Duration = .seconds(60)
    /// No state directory (so no shared container either): `runs()` is then empty.
    var inMemory = false
    /// The built-in actions job specs name (none by default, as an embedder's).
    var actions: ActionBinding = .none

    init() throws {}

    var runtime: RefreshRuntime { scheduler!.runtime }
    var now: Instant { clock.source.now() }

    func job(_ definition: TaskDefinition, _ work: Work) { jobs.append((definition, work)) }

    func spec(_ spec: JobSpec, _ work: Work) {
        var spec = spec
        spec.command = work.command
        specs.append(spec)
    }

    func published(_ path: String) -> String? {
        try? String(contentsOfFile: directory + "/state/shared/" + path, encoding: .utf8)
    }

    func start() throws {
        let sink = lines
        var options = RefreshScheduler.Options(
            stateDirectory: inMemory ? nil : directory + "/state", conditionsProbe: conditionsProbe,
            conditionsFallbackInterval: conditionsReread,
            logger: Logger(label: "test") { _ in CapturingLogHandler(sink: sink) }, clock: clock.source)
        options.actions = actions
        let s = try RefreshScheduler(options: options)
        for (definition, work) in jobs { s.register(definition, command: work.command) }
        if !specs.isEmpty { s.runtime.load(specs) }
        scheduler = s
        let t = Thread { [finished] in
            try? s.run()
            finished.signal()
        }
        thread = t
        t.start()
    }

    func wait(_ limit: Duration, until condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(Double(limit.wholeMilliseconds) / 1000)
        while Date() < end {
            if condition() { return true }
            usleep(5000)
        }
        return condition()
    }

    func pass(_ span: Duration) { usleep(UInt32(span.wholeMilliseconds * 1000)) }

    func stopLoop() {
        guard let scheduler, thread != nil else { return }
        scheduler.stop()
        _ = finished.wait(timeout: .now() + 10)
        thread = nil
        self.scheduler = nil
    }

    func restart(downtime: Duration) throws {
        stopLoop()
        pass(downtime)
        try start()
    }

    func stepClock(by delta: Duration) {
        clock.step(by: delta.wholeMilliseconds)
        scheduler?.injectClockSet()
    }

    func runs() -> [RunRecord] {
        guard let store = try? StateStore.open(directory: directory + "/state", readOnly: true) else { return [] }
        defer { store.close() }
        return ((try? store.recentRuns(limit: 1000)) ?? []).reversed()
    }

    func finish() {
        stopLoop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The same runtime on the simulated host: virtual clock, modelled processes, nothing sleeps.
final class SimulatedHarness: HostHarness {
    let kind = HostKind.simulated
    let host: SimulatedHost
    let store: any StateStoring
    var jobs: [(TaskDefinition, Work)] = []

    init() throws {
        let behaviours = WorkTable()
        host = SimulatedHost(start: Instant(milliseconds: 1_800_000_000_000)) { order, _ in
            behaviours.lookup(order.identifier).behaviour(startedAt: order.started)
        }
        self.behaviours = behaviours
        store = InMemoryStore()
    }

    let behaviours: WorkTable
    var runtime: RefreshRuntime { host.runtime! }
    var now: Instant { host.clock }
    var specs: [JobSpec] = []
    /// The runtime's shared container (nil: none is configured) and conditions re-read period.
    var sharedContainer: String? = "/shared"
    var conditionsReread: Duration = .seconds(60)
    /// The built-in actions job specs name (their runs modelled by `host.actionBehaviour`).
    var actions: ActionBinding = .none

    func job(_ definition: TaskDefinition, _ work: Work) {
        jobs.append((definition, work))
        behaviours.set(definition.identifier, work)
    }

    func spec(_ spec: JobSpec, _ work: Work) {
        specs.append(spec)
        for family in spec.widget?.families ?? [] {
            behaviours.set(WidgetSpec.providerIdentifier(job: spec.identifier, family: family), work)
        }
        behaviours.set(spec.identifier, work)
    }

    func published(_ path: String) -> String? { host.publications[path] }

    func start() throws {
        let runtime = try host.start(store: store, options: .init(sharedContainer: sharedContainer,
                                                                  logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() },
                                                                  conditionsReread: conditionsReread, actions: actions))
        for (definition, work) in jobs { runtime.register(definition, handler: .command(work.command)) }
        if !specs.isEmpty { runtime.load(specs) }
        runtime.restoreSavedState()
    }

    func wait(_ limit: Duration, until condition: () -> Bool) -> Bool {
        host.advance(until: condition, limit: limit)
    }

    func pass(_ span: Duration) { host.advance(by: span) }

    func restart(downtime: Duration) throws {
        runtime.stop()
        host.advance(until: { host.stopped }, limit: .seconds(3600))
        host.passTime(downtime)
        try start()
    }

    func stepClock(by delta: Duration) { host.stepClock(by: delta) }

    func runs() -> [RunRecord] { ((try? store.recentRuns(limit: 1000)) ?? []).reversed() }

    func finish() {}

    /// Behaviours by identifier, shared with the host's model closure.
    final class WorkTable: @unchecked Sendable {
        private let lock = NSLock()
        private var table: [String: Work] = [:]
        func set(_ id: String, _ work: Work) { lock.withLock { table[id] = work } }
        func lookup(_ id: String) -> Work { lock.withLock { table[id] ?? Work() } }
    }
}
