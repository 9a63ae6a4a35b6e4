import Foundation
import Glibc
import Synchronization
import Testing
@testable import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStaging
import RefreshdSimulation

/// Issue 22: a built-in action runs for a real duration on both hosts and gets a command's
/// expiration and kill. On the libuv host the real `stage-playlist` decodes a huge image in its
/// worker process (`refreshd action-worker`), and an in-process action runs on libuv's pool; on
/// the simulated host the same runtime runs the same actions as modelled runs in virtual time
/// (`SimulatedHost.ActionBehaviour`). Same assertions.
@Suite(.serialized) struct BothHostsActionTests {
    static let allowance = Duration.seconds(1)
    /// Two seconds: a debug worker that heeds SIGTERM while the whole suite runs beside it once
    /// took just over one to write its result and exit (a fresh clone's CI, 2026-12-05), and was
    /// then killed at the end of a one-second grace, as the runtime should.
    static let grace = Duration.seconds(2)

    /// The real stage-playlist action over a library whose one image takes seconds to decode.
    static func stagePlaylist(_ h: any HostHarness) throws -> BuiltInAction {
        let library = (h as? LibuvHarness)?.directory ?? "/nonexistent"
        if h is LibuvHarness { try StagingWorkerTests.hugeLibrary(library) }
        var options = StageOptions(library: library + "/library", switchTimes: [ClockTime("06:00")].compactMap { $0 },
                                   zone: "UTC", assetsPerDay: 1,
                                   families: [.standard(.systemSmall), .standard(.systemMedium), .standard(.systemLarge)],
                                   widgetKind: "wallpaper")
        options.day = .today
        return StagePlaylist.action(options)
    }

    static func definition(_ id: String) -> TaskDefinition {
        TaskDefinition(identifier: id, kind: .processing, allowance: allowance, grace: grace)
    }

    /// On the simulated host: how the action with this identifier behaves.
    static func model(_ h: any HostHarness, _ id: String, _ behaviour: SimulatedHost.ActionBehaviour) {
        guard let sim = h as? SimulatedHarness else { return }
        let modelled = sim.host.actionBehaviour
        sim.host.actionBehaviour = { order, action in order.identifier == id ? behaviour : modelled(order, action) }
    }

    /// The pid of the worker the libuv host started for `name`, from its log line.
    static func workerPID(_ h: any HostHarness, _ name: String) -> Int32? {
        guard let h = h as? LibuvHarness,
              let line = h.lines.all.first(where: { $0.contains("\(name) started in worker pid ") }) else { return nil }
        return line.split(separator: " ").last.flatMap { Int32($0) }
    }

    /// How long the run took, from its start to its recorded end.
    static func took(_ run: RunRecord) -> Duration { run.ended.map { $0.duration(since: run.started) } ?? .seconds(999) }

    /// stage-playlist overruns its allowance: at the deadline its worker gets SIGTERM, the
    /// stager sees `isExpired` and returns, the worker exits 1 and the run ends `expired` within
    /// the grace, not abandoned at its end.
    @Test(arguments: HostKind.allCases)
    func anOverrunningStagePlaylistExpires(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        Self.model(h, "t.stage", .init(duration: .seconds(30),
                                       whenExpired: ActionResult(success: false, log: ["expired while staging (modelled)"])))
        let action = try Self.stagePlaylist(h)
        try h.start()
        h.runtime.register(Self.definition("t.stage"), handler: .action(action))
        try h.runtime.submit(TaskRequest(identifier: "t.stage", kind: .processing))
        #expect(h.wait(.seconds(20)) { h.outcomes("t.stage") == [.expired] })
        let run = try #require(h.runs().first)
        // Ended by the worker's own exit after SIGTERM (or by SIGTERM before its handler was
        // installed), within the grace: it was not killed.
        #expect(run.exitStatus == 1 || run.signal == SIGTERM, "\(run)")
        let took = Self.took(run)
        #expect(took >= Self.allowance && took < Self.allowance + Self.grace, "\(took)")
        if let pid = Self.workerPID(h, StagePlaylist.actionName) { #expect(kill(pid, 0) != 0) }
        if h is LibuvHarness { #expect(Self.workerPID(h, StagePlaylist.actionName) != nil) }
    }

    /// A worker that does not answer its expiration (stopped here, as one stuck in a read would
    /// be) is killed when the grace ends: the run ends `expired` then, abandoned (no exit of its
    /// own), and the worker process is gone.
    @Test(arguments: HostKind.allCases)
    func aWorkerIgnoringItsExpirationIsKilledAfterTheGrace(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        Self.model(h, "t.stage", .init(duration: .seconds(30), ignoresExpiration: true))
        let action = try Self.stagePlaylist(h)
        try h.start()
        h.runtime.register(Self.definition("t.stage"), handler: .action(action))
        try h.runtime.submit(TaskRequest(identifier: "t.stage", kind: .processing))
        if h is LibuvHarness {
            #expect(h.wait(.seconds(5)) { Self.workerPID(h, StagePlaylist.actionName) != nil })
            let pid = try #require(Self.workerPID(h, StagePlaylist.actionName))
            #expect(kill(pid, SIGSTOP) == 0)
        }
        #expect(h.wait(.seconds(20)) { h.outcomes("t.stage") == [.expired] })
        let run = try #require(h.runs().first)
        #expect(run.exitStatus == nil && run.signal == nil, "\(run)")  // abandoned at the kill
        let took = Self.took(run)
        #expect(took >= Self.allowance + Self.grace && took < Self.allowance + Self.grace + .seconds(1), "\(took)")
        if let pid = Self.workerPID(h, StagePlaylist.actionName) {
            #expect(h.wait(.seconds(5)) { kill(pid, 0) != 0 })  // SIGKILL reached the stopped worker
        }
        if let sim = h as? SimulatedHarness {  // its SIGKILL ends the modelled worker at that instant
            #expect(h.wait(.milliseconds(1)) { sim.host.livingActions.isEmpty })
        }
    }
}

extension BothHostsActionTests {
    /// A light action run in refreshd's process (libuv's pool): it looks at `isExpired` every
    /// 10 ms unless told to ignore it, and gives up after `limit`.
    static func inProcess(heeds: Bool, limit: Duration = .seconds(4)) -> BuiltInAction {
        BuiltInAction(name: "t-wait") { context in
            let end = Date().addingTimeInterval(Double(limit.wholeMilliseconds) / 1000)
            while Date() < end {
                if heeds, context.isExpired { return ActionResult(success: false, log: ["stopped at the expiration"]) }
                usleep(10_000)
            }
            return ActionResult(success: true)
        }
    }

    /// An in-process action that heeds its expiration ends `expired` at the deadline; one that
    /// ignores it is abandoned when the grace ends (its late return is ignored).
    @Test(arguments: HostKind.allCases)
    func anInProcessActionExpiresOrIsAbandoned(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        Self.model(h, "t.heeds", .init(duration: .seconds(4), result: ActionResult(success: true),
                                       whenExpired: ActionResult(success: false, log: ["stopped at the expiration"])))
        Self.model(h, "t.ignores", .init(duration: .seconds(4), result: ActionResult(success: true), ignoresExpiration: true))
        try h.start()
        h.runtime.register(Self.definition("t.heeds"), handler: .action(Self.inProcess(heeds: true)))
        h.runtime.register(Self.definition("t.ignores"), handler: .action(Self.inProcess(heeds: false, limit: .seconds(3))))
        try h.runtime.submit(TaskRequest(identifier: "t.heeds", kind: .processing))
        try h.runtime.submit(TaskRequest(identifier: "t.ignores", kind: .processing))
        #expect(h.wait(.seconds(10)) { h.outcomes("t.heeds") == [.expired] && h.outcomes("t.ignores") == [.expired] })
        let runs = h.runs()
        let heeds = try #require(runs.first { $0.identifier == "t.heeds" })
        let ignores = try #require(runs.first { $0.identifier == "t.ignores" })
        #expect(Self.took(heeds) >= Self.allowance && Self.took(heeds) < Self.allowance + Self.grace, "\(Self.took(heeds))")
        #expect(Self.took(ignores) >= Self.allowance + Self.grace && Self.took(ignores) < Self.allowance + Self.grace + .seconds(1),
                "\(Self.took(ignores))")
        // The abandoned body returns later; the runtime ignores it (its run stays expired).
        h.pass(.seconds(2))
        #expect(h.outcomes("t.ignores") == [.expired])
    }
}

extension BothHostsActionTests {
    /// Issue 23: an instance of a staging template runs its template's action filled with its
    /// values (its own library and folder) under the template's allowance and grace: an
    /// overrunning one expires at the deadline (SIGTERM to its worker, which returns), one that
    /// does not answer is killed when the grace ends, exactly as a job's action and a command.
    @Test(arguments: HostKind.allCases, [false, true])
    func anInstancesStagePlaylistExpiresOrIsKilled(_ kind: HostKind, stopped: Bool) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let instance = "t.stage[alice]"
        Self.model(h, instance, .init(duration: .seconds(30), whenExpired: ActionResult(success: false, log: ["expired (modelled)"]),
                                      ignoresExpiration: stopped))
        let root = (h as? LibuvHarness)?.directory ?? "/nonexistent"
        if h is LibuvHarness { try StagingWorkerTests.hugeLibrary(root + "/libraries/alice") }
        var options = StageOptions(library: root + "/libraries/{user}/library", switchTimes: [ClockTime("06:00")].compactMap { $0 },
                                   zone: "UTC", assetsPerDay: 1,
                                   families: [.standard(.systemSmall), .standard(.systemMedium), .standard(.systemLarge)],
                                   widgetKind: "wallpaper-{user}")
        options.folder = "wallpaper-{user}"
        options.day = .today
        let definition = TaskDefinition(identifier: "t.stage", kind: .processing, namespace: "t.stage",
                                        allowance: Self.allowance, grace: Self.grace)
        let spec = JobSpec(definition: definition, command: CommandJob(argv: []), action: .stagePlaylist(options),
                           template: TemplateSpec(parameters: ["user"], pathParameters: ["user"], stagedKind: "wallpaper-{user}"))
        (h as? LibuvHarness)?.actions = StagingActions.binding
        (h as? SimulatedHarness)?.actions = StagingActions.binding
        h.spec(spec, Work())
        try h.start()
        try h.runtime.addInstance(template: "t.stage", key: "alice")
        if stopped, h is LibuvHarness {
            #expect(h.wait(.seconds(5)) { Self.workerPID(h, StagePlaylist.actionName) != nil })
            let pid = try #require(Self.workerPID(h, StagePlaylist.actionName))
            #expect(kill(pid, SIGSTOP) == 0)
        }
        #expect(h.wait(.seconds(20)) { h.outcomes(instance) == [.expired] })
        let run = try #require(h.runs().first { $0.identifier == instance })
        let took = Self.took(run)
        if stopped {
            #expect(run.exitStatus == nil && run.signal == nil, "\(run)")  // abandoned at the kill
            #expect(took >= Self.allowance + Self.grace && took < Self.allowance + Self.grace + .seconds(1), "\(took)")
        } else {
            #expect(run.exitStatus == 1 || run.signal == SIGTERM, "\(run)")
            #expect(took >= Self.allowance && took < Self.allowance + Self.grace, "\(took)")
        }
        if let pid = Self.workerPID(h, StagePlaylist.actionName) { #expect(h.wait(.seconds(5)) { kill(pid, 0) != 0 }) }
        if h is LibuvHarness {
            // Its own folder, never the template's unfilled one.
            #expect(!FileManager.default.fileExists(atPath: root + "/state/shared/wallpaper-{user}"))
            #expect(Self.workerPID(h, StagePlaylist.actionName) != nil)
        }
    }
}
