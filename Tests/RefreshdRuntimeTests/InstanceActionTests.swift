import Foundation
import Logging
import Synchronization
import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
@testable import RefreshdSimulation

/// A template whose built-in action holds `{user}` in its paths (issue 23), on the simulated
/// host: each instance's run is bound with its own filled options, and a value that would make
/// a path leave its folder (`..`, a hidden name) is refused when the instance is added; values
/// that are no key at all (`a/b`, NUL, 129 bytes, empty) were already refused as keys.
@Suite struct InstanceActionTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let template = "t.stage"

    /// The options each run was bound with, in order.
    final class Bound: Sendable {
        let specs = Mutex<[ActionSpec]>([])
    }

    static func runtime(_ bound: Bound) -> (SimulatedHost, InMemoryStore, RefreshRuntime.Options) {
        let binding = ActionBinding(["t-stage": { spec in
            bound.specs.withLock { $0.append(spec) }
            return BuiltInAction(name: spec.name) { _ in ActionResult(success: true) }
        }])
        let host = SimulatedHost(start: start)
        host.actionBehaviour = { _, _ in .init(duration: .seconds(1), result: ActionResult(success: true)) }
        let options = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() }, actions: binding)
        return (host, InMemoryStore(), options)
    }

    static func spec(pathParameters: [String] = ["user"]) -> JobSpec {
        let action = ActionSpec(name: "t-stage", fingerprint: "library=/srv/libraries/{user}\nfolder=wallpaper-{user}",
                                payload: #"{"folder":"wallpaper-{user}","library":"/srv/libraries/{user}","widgetKind":"wallpaper"}"#)
        return JobSpec(definition: TaskDefinition(identifier: template, kind: .processing, namespace: template,
                                                  allowance: .seconds(60), resubmit: .after(.seconds(86_400))),
                       command: CommandJob(argv: []), action: action,
                       template: TemplateSpec(parameters: ["user"], firstRequest: .after(.seconds(5)), pathParameters: pathParameters))
    }

    @Test func eachInstanceStagesIntoItsOwnPaths() throws {
        let bound = Bound()
        let (host, store, options) = Self.runtime(bound)
        let runtime = try host.start(store: store, options: options)
        runtime.load([Self.spec()])
        try runtime.addInstance(template: Self.template, key: "alice")
        try runtime.addInstance(template: Self.template, key: "bob@example.com")
        host.advance(by: .seconds(10))
        let specs = bound.specs.withLock { $0 }
        #expect(specs.map(\.fingerprint) == [
            "library=/srv/libraries/alice\nfolder=wallpaper-alice",
            "library=/srv/libraries/bob@example.com\nfolder=wallpaper-bob@example.com",
        ])
        #expect(specs.first?.payload == #"{"folder":"wallpaper-alice","library":"/srv/libraries/alice","widgetKind":"wallpaper"}"#)
        let runs = try store.recentRuns(limit: 10)
        #expect(Set(runs.map(\.identifier)) == ["t.stage[alice]", "t.stage[bob@example.com]"])
        #expect(runs.allSatisfy { $0.outcome == .success })
    }

    @Test func hostileValuesNeverReachAPath() throws {
        let bound = Bound()
        let (host, store, options) = Self.runtime(bound)
        let runtime = try host.start(store: store, options: options)
        runtime.load([Self.spec()])
        // Leaving or hiding in the folder: refused as a path value, with why.
        for key in ["..", ".", ".hidden"] {
            #expect {
                try runtime.addInstance(template: Self.template, key: key)
            } throws: { error in
                guard case let .badValues(_, _, problem) = error as? InstanceError else { return false }
                return problem.hasPrefix("user: the value \"\(key)\" begins with '.'")
            }
        }
        // Not a key at all: refused as keys (no '/', no NUL, 1 to 128 bytes).
        for key in ["../x", "a/b", "a\u{0}b", String(repeating: "x", count: 129), "", "a b"] {
            #expect {
                try runtime.addInstance(template: Self.template, key: key)
            } throws: { error in
                if case .badKey? = error as? InstanceError { true } else { false }
            }
        }
        // Dots inside a value are fine: the segment holds other bytes.
        try runtime.addInstance(template: Self.template, key: "a..b")
        host.advance(by: .seconds(10))
        #expect(runtime.instances(of: Self.template)?.map(\.key) == ["a..b"])
        #expect(bound.specs.withLock { $0 }.map(\.fingerprint) == ["library=/srv/libraries/a..b\nfolder=wallpaper-a..b"])
    }

    /// An instance added before its template put the parameter in a path keeps its record, but
    /// its runs fail saying why: its path is never made.
    @Test func anInstanceKeptFromBeforeThePathRuleFailsItsRuns() throws {
        let bound = Bound()
        let (host, store, options) = Self.runtime(bound)
        var runtime = try host.start(store: store, options: options)
        runtime.load([Self.spec(pathParameters: [])])
        try runtime.addInstance(template: Self.template, key: ".old")
        runtime.stop()
        host.advance(until: { host.stopped }, limit: .seconds(60))
        bound.specs.withLock { $0.removeAll() }
        runtime = try host.start(store: store, options: options)
        let seen = Mutex<[String]>([])
        runtime.observe { observation in seen.withLock { $0.append(observation.message) } }
        runtime.load([Self.spec()])
        runtime.restoreSavedState()
        host.advance(by: .seconds(10))
        #expect(bound.specs.withLock { $0 }.isEmpty)
        let runs = try store.recentRuns(limit: 10).filter { $0.identifier == "t.stage[.old]" }
        #expect(runs.first?.outcome == .failure)
        #expect(seen.withLock { $0 }.contains { $0.contains("could not start: user: the value \".old\" begins with '.'") })
    }
}
