import Foundation
import Testing

/// Issue 22: the public surface of the library products is the embedding API and nothing else.
///
/// `import Refreshd` brings the `Refreshd` module and re-exports `RefreshdCore` and
/// `RefreshdRuntime`; the store modules ride along. Every other declaration of theirs is
/// `package` (the benchmarks are a target of the package, so they need no SPI). The check reads
/// the built modules as a client does: `swift-symbolgraph-extract` lists each module's public
/// symbols (SPI and synthesized members left out), and the list must equal `embeddingAPI`. A new
/// `public` outside it fails here naming the symbol: make it `package`, or, if it is meant for
/// embedders, add it to the list (and ARCHITECTURE.md's "Modules") with a doc comment.
@Suite struct PublicSurfaceTests {
    /// Per module, each public symbol as its path (`Type.member(label:)`), sorted.
    static let embeddingAPI: [String: [String]] = [
        "Refreshd": [
            "ConditionsProbe",
            "ConditionsProbe.init(powerSupplyDirectory:netDirectory:ipv4RouteFile:ipv6RouteFile:)",
            "ConditionsProbe.ipv4RouteFile",
            "ConditionsProbe.ipv6RouteFile",
            "ConditionsProbe.netDirectory",
            "ConditionsProbe.powerSupplyDirectory",
            "ConditionsProbe.read()",
            "RefreshScheduler",
            "RefreshScheduler.Options",
            "RefreshScheduler.Options.clock",
            "RefreshScheduler.Options.conditionsFallbackInterval",
            "RefreshScheduler.Options.conditionsProbe",
            "RefreshScheduler.Options.configuration",
            "RefreshScheduler.Options.handleSignals",
            "RefreshScheduler.Options.init(stateDirectory:sharedContainer:configuration:handleSignals:conditionsProbe:conditionsFallbackInterval:logger:clock:runCgroups:ownsProcess:)",
            "RefreshScheduler.Options.logger",
            "RefreshScheduler.Options.ownsProcess",
            "RefreshScheduler.Options.runCgroups",
            "RefreshScheduler.Options.sharedContainer",
            "RefreshScheduler.Options.stateDirectory",
            "RefreshScheduler.addInstance(template:key:values:)",
            "RefreshScheduler.addInstances(_:)",
            "RefreshScheduler.cancel(taskRequestWithIdentifier:)",
            "RefreshScheduler.cancelAllTaskRequests()",
            "RefreshScheduler.failure",
            "RefreshScheduler.init(options:)",
            "RefreshScheduler.instances(of:)",
            "RefreshScheduler.isStopping",
            "RefreshScheduler.observe(includingRoutine:_:)",
            "RefreshScheduler.onHangup",
            "RefreshScheduler.pendingTaskRequests()",
            "RefreshScheduler.register(_:command:)",
            "RefreshScheduler.register(_:launchHandler:)",
            "RefreshScheduler.registerTemplate(_:parameters:firstRequest:command:)",
            "RefreshScheduler.registerTemplate(_:parameters:firstRequest:launchHandler:)",
            "RefreshScheduler.removeInstance(template:key:)",
            "RefreshScheduler.restoreSavedState()",
            "RefreshScheduler.run()",
            "RefreshScheduler.stop()",
            "RefreshScheduler.submit(_:)",
            "SchedulerFailure",
            "SchedulerFailure.description",
            "SchedulerFailure.message",
            "WallClockSource",
            "WallClockSource.init(now:)",
            "WallClockSource.now",
            "WallClockSource.system",
        ],
        "RefreshdCore": [
            "CommandJob",
            "CommandJob.argv",
            "CommandJob.environment",
            "CommandJob.init(argv:environment:workingDirectory:)",
            "CommandJob.workingDirectory",
            "Conditions",
            "Conditions.encode(to:)",
            "Conditions.externalPower",
            "Conditions.init(externalPower:network:)",
            "Conditions.init(from:)",
            "Conditions.network",
            "FirstRequest",
            "FirstRequest.after(_:)",
            "FirstRequest.at(_:)",
            "FirstRequest.core",
            "FirstRequest.nextSlot(_:)",
            "InstanceError",
            "InstanceError.badKey(template:key:problem:)",
            "InstanceError.badValues(template:key:problem:)",
            "InstanceError.code",
            "InstanceError.description",
            "InstanceError.notSaved(reason:)",
            "InstanceError.stopping",
            "InstanceError.unknownInstance(template:key:)",
            "InstanceError.unknownTemplate(_:)",
            "InstanceRecord",
            "InstanceRecord.identifier",
            "InstanceRecord.init(from:)",
            "InstanceRecord.init(template:key:values:)",
            "InstanceRecord.key",
            "InstanceRecord.template",
            "InstanceRecord.values",
            "Instant",
            "Instant.+(_:_:)",
            "Instant.-(_:_:)",
            "Instant.<(_:_:)",
            "Instant.description",
            "Instant.duration(since:)",
            "Instant.encode(to:)",
            "Instant.init(from:)",
            "Instant.init(milliseconds:)",
            "Instant.init(secondsSinceEpoch:)",
            "Instant.iso8601",
            "Instant.milliseconds",
            "MissedPolicy",
            "MissedPolicy.all",
            "MissedPolicy.init(rawValue:)",
            "MissedPolicy.once",
            "MissedPolicy.skip",
            "Outcome",
            "Outcome.crashed",
            "Outcome.expired",
            "Outcome.failure",
            "Outcome.init(rawValue:)",
            "Outcome.interrupted",
            "Outcome.isFailure",
            "Outcome.success",
            "ResubmitPolicy",
            "ResubmitPolicy.after(_:)",
            "ResubmitPolicy.calendar(_:)",
            "ResubmitPolicy.none",
            "RetryPolicy",
            "RetryPolicy.Backoff",
            "RetryPolicy.Backoff.exponential",
            "RetryPolicy.Backoff.init(rawValue:)",
            "RetryPolicy.Backoff.linear",
            "RetryPolicy.backoff",
            "RetryPolicy.delay(forAttempt:)",
            "RetryPolicy.init(backoff:initial:maximum:limit:)",
            "RetryPolicy.initial",
            "RetryPolicy.limit",
            "RetryPolicy.maximum",
            "Schedule",
            "Schedule.==(_:_:)",
            "Schedule.count(from:through:limit:)",
            "Schedule.description",
            "Schedule.hash(into:)",
            "Schedule.init(_:next:)",
            "Schedule.next(after:)",
            "Schedule.text",
            "SchedulerConfiguration",
            "SchedulerConfiguration.init(maxConcurrentRuns:maxPendingAppRefresh:maxPendingProcessing:seed:)",
            "SchedulerConfiguration.maxConcurrentRuns",
            "SchedulerConfiguration.maxPendingAppRefresh",
            "SchedulerConfiguration.maxPendingProcessing",
            "SchedulerConfiguration.retriesInterruptedRuns",
            "SchedulerConfiguration.runRetention",
            "SchedulerConfiguration.seed",
            "SchedulerError",
            "SchedulerError.description",
            "SchedulerError.notPermitted(identifier:)",
            "SchedulerError.notSaved(reason:)",
            "SchedulerError.tooManyPendingTaskRequests(identifier:kind:namespace:limit:)",
            "SchedulerError.unavailable",
            "TaskDefinition",
            "TaskDefinition.accuracy",
            "TaskDefinition.allowance",
            "TaskDefinition.catchUp",
            "TaskDefinition.fixedJitter",
            "TaskDefinition.grace",
            "TaskDefinition.identifier",
            "TaskDefinition.init(identifier:kind:namespace:allowance:grace:resubmit:retry:requiresExternalPower:requiresNetworkConnectivity:missed:catchUp:jitter:fixedJitter:accuracy:)",
            "TaskDefinition.jitter",
            "TaskDefinition.kind",
            "TaskDefinition.missed",
            "TaskDefinition.namespace",
            "TaskDefinition.requiresExternalPower",
            "TaskDefinition.requiresNetworkConnectivity",
            "TaskDefinition.resubmit",
            "TaskDefinition.retry",
            "TaskDefinition.schedule",
            "TaskKind",
            "TaskKind.appRefresh",
            "TaskKind.defaultAllowance",
            "TaskKind.init(rawValue:)",
            "TaskKind.processing",
            "TaskRequest",
            "TaskRequest.earliestBeginDate",
            "TaskRequest.identifier",
            "TaskRequest.init(identifier:kind:earliestBeginDate:requiresExternalPower:requiresNetworkConnectivity:)",
            "TaskRequest.kind",
            "TaskRequest.requiresExternalPower",
            "TaskRequest.requiresNetworkConnectivity",
        ],
        "RefreshdRuntime": [
            "RefreshTask",
            "RefreshTask.deadline",
            "RefreshTask.expirationHandler",
            "RefreshTask.identifier",
            "RefreshTask.kind",
            "RefreshTask.runID",
            "RefreshTask.setTaskCompleted(success:)",
            "RefreshTask.sharedContainer",
            "RuntimeObservation",
            "RuntimeObservation.Kind",
            "RuntimeObservation.Kind.activity",
            "RuntimeObservation.Kind.activityHeld",
            "RuntimeObservation.Kind.activityIgnored",
            "RuntimeObservation.Kind.activityRefused",
            "RuntimeObservation.Kind.cancelled",
            "RuntimeObservation.Kind.clockChanged",
            "RuntimeObservation.Kind.conditions",
            "RuntimeObservation.Kind.dropped",
            "RuntimeObservation.Kind.expired",
            "RuntimeObservation.Kind.fenced",
            "RuntimeObservation.Kind.finished",
            "RuntimeObservation.Kind.held",
            "RuntimeObservation.Kind.init(rawValue:)",
            "RuntimeObservation.Kind.instance",
            "RuntimeObservation.Kind.instanceAdded",
            "RuntimeObservation.Kind.instanceRemoved",
            "RuntimeObservation.Kind.interrupted",
            "RuntimeObservation.Kind.killed",
            "RuntimeObservation.Kind.launched",
            "RuntimeObservation.Kind.missed",
            "RuntimeObservation.Kind.notificationDropped",
            "RuntimeObservation.Kind.notificationGivenUp",
            "RuntimeObservation.Kind.notificationRetry",
            "RuntimeObservation.Kind.notified",
            "RuntimeObservation.Kind.output",
            "RuntimeObservation.Kind.outputDropped",
            "RuntimeObservation.Kind.paused",
            "RuntimeObservation.Kind.publishFailed",
            "RuntimeObservation.Kind.published",
            "RuntimeObservation.Kind.reaped",
            "RuntimeObservation.Kind.rejected",
            "RuntimeObservation.Kind.reloadRefused",
            "RuntimeObservation.Kind.reloaded",
            "RuntimeObservation.Kind.replaced",
            "RuntimeObservation.Kind.results",
            "RuntimeObservation.Kind.resumed",
            "RuntimeObservation.Kind.retriesExhausted",
            "RuntimeObservation.Kind.retry",
            "RuntimeObservation.Kind.stopped",
            "RuntimeObservation.Kind.stopping",
            "RuntimeObservation.Kind.storeFailed",
            "RuntimeObservation.Kind.submitted",
            "RuntimeObservation.Kind.waiting",
            "RuntimeObservation.Kind.widget",
            "RuntimeObservation.Kind.widgetDeferred",
            "RuntimeObservation.Kind.widgetFailed",
            "RuntimeObservation.Kind.widgetFresh",
            "RuntimeObservation.Kind.widgetReload",
            "RuntimeObservation.Kind.widgetShown",
            "RuntimeObservation.Kind.widgetStale",
            "RuntimeObservation.Kind.widgetTimeline",
            "RuntimeObservation.at",
            "RuntimeObservation.count",
            "RuntimeObservation.encode(to:)",
            "RuntimeObservation.identifier",
            "RuntimeObservation.init(from:)",
            "RuntimeObservation.init(time:kind:identifier:runID:outcome:at:count:message:)",
            "RuntimeObservation.kind",
            "RuntimeObservation.message",
            "RuntimeObservation.outcome",
            "RuntimeObservation.runID",
            "RuntimeObservation.time",
        ],
        // The stores are reached through `RefreshScheduler.Options.stateDirectory` only.
        "RefreshdStore": [],
        // Not a product: linked into the `refreshd` binary and the benchmarks only (issue 24).
        "RefreshdPostgres": [],
    ]

    /// The directory of the built modules (beside the test bundle and the `refreshd` binary).
    static var modulesDirectory: String { CLI.built("Modules") }

    /// A program on PATH, or nil.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The public symbols of `module` as built, read from its symbol graph.
    static func publicSymbols(of module: String) throws -> Set<String> {
        let tool = try #require(onPath("swift-symbolgraph-extract"), "swift-symbolgraph-extract (the Swift toolchain's) is not on PATH")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-symbols-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: output) }
        // The C modules' maps and headers, as the build found them (libpq's headers live in a
        // directory of their own on Debian).
        var arguments = ["-module-name", module, "-I", modulesDirectory,
                         "-minimum-access-level", "public", "-skip-synthesized-members", "-output-dir", output]
        for c in ["CLibUV", "CSQLite", "CLibPQ"] { arguments += ["-I", Repository.root + "/Sources/" + c] }
        let libpq = (try? CLI.run(["--cflags-only-I", "libpq"], timeout: 10, executable: onPath("pkg-config") ?? "/usr/bin/pkg-config"))?
            .stdout.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("-I") }.map(String.init) ?? []
        for include in libpq + ["-I/usr/include/postgresql"] { arguments += ["-Xcc", include] }
        let result = try CLI.run(arguments, timeout: 60, executable: tool)
        #expect(result.status == 0, "swift-symbolgraph-extract \(module): \(result.stderr)")
        var symbols: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: output) where file.hasSuffix(".symbols.json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: output + "/" + file))
            let graph = try JSONDecoder().decode(SymbolGraph.self, from: data)
            for symbol in graph.symbols { symbols.insert(symbol.pathComponents.joined(separator: ".")) }
        }
        return symbols
    }

    struct SymbolGraph: Decodable {
        struct Symbol: Decodable { var pathComponents: [String] }
        var symbols: [Symbol]
    }

    @Test(arguments: ["Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdStore", "RefreshdPostgres"])
    func aModuleShowsOnlyTheEmbeddingAPI(module: String) throws {
        let allowed = Set(try #require(Self.embeddingAPI[module]))
        let found = try Self.publicSymbols(of: module)
        let extra = found.subtracting(allowed).sorted()
        let missing = allowed.subtracting(found).sorted()
        #expect(extra.isEmpty, "\(module): public outside the embedding API (make it package, or list it here):\n\(extra.joined(separator: "\n"))")
        #expect(missing.isEmpty, "\(module): listed as embedding API but not public (remove it from the list):\n\(missing.joined(separator: "\n"))")
    }

    /// The check sees a public symbol where there is one: the scheduler type itself.
    @Test func theCheckReadsTheBuiltModules() throws {
        #expect(try Self.publicSymbols(of: "Refreshd").contains("RefreshScheduler.submit(_:)"))
    }
}
