import Testing
@testable import RefreshdCore

/// Templates and instances (issue 23) in the pure machines: each event -> its exact effects,
/// and the restore after a restart (a kill -9 is the same: the store holds what was committed).
@Suite struct InstanceMachineTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let template = TaskDefinition(identifier: "app.feed.refresh", namespace: "app.feed.refresh",
                                         allowance: .seconds(30), resubmit: .after(.seconds(3600)),
                                         retry: RetryPolicy(initial: .seconds(60)))
    static let spec = TemplateSpec(parameters: ["user"])

    /// A core that stores state and logs routine lines, with the template declared and restored.
    static func core(_ restored: SchedulerCore.RestoredState = SchedulerCore.RestoredState()) -> SchedulerCore {
        var core = SchedulerCore(configuration: SchedulerConfiguration())
        _ = core.handle(.declareTemplate(template, spec), at: t0)
        _ = core.handle(.restore(restored), at: t0)
        return core
    }

    static func pending(_ id: String, earliest: Instant, sequence: UInt64, origin: PendingRequest.Origin = .submitted,
                        submitted: Instant = t0) -> PendingRequest {
        PendingRequest(identifier: id, namespace: "app.feed.refresh", kind: .appRefresh, earliest: earliest,
                       submitted: submitted, sequence: sequence, requiresExternalPower: false,
                       requiresNetworkConnectivity: false, origin: origin)
    }

    @Test func addingAnInstanceSavesItLogsItAndGivesItItsFirstRequest() {
        var core = Self.core()
        let effects = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: "alice", values: [:])), at: Self.t0)
        let request = Self.pending("app.feed.refresh[alice]", earliest: Self.t0, sequence: 1)
        #expect(effects == [
            .persist(.saveInstance(InstanceRecord(template: "app.feed.refresh", key: "alice", values: ["user": "alice"]))),
            .log(.instance(.added(identifier: "app.feed.refresh[alice]"))),
            .persist(.savePending(request)),
            .log(.submitted(request, replaced: false)),
            .armTimer(at: Self.t0),
        ])
        #expect(core.instances(of: "app.feed.refresh") == [InstanceRecord(template: "app.feed.refresh", key: "alice", values: ["user": "alice"])])
        // The template itself is no job: only its instances run.
        #expect(throws: SchedulerError.notPermitted(identifier: "app.feed.refresh")) {
            try core.submit(TaskRequest(identifier: "app.feed.refresh"), at: Self.t0)
        }
    }

    /// The simulator checks the invariants after every step from what the step changed; an
    /// instance added while it runs (a replayed `ctl instance add`) inserts its first request
    /// by slot, which the change log missed: `pending-count-mismatch`, queue count 1, requests 0.
    @Test func anInstanceAddedWhileTheIncrementalCheckRunsIsSeenByIt() {
        var core = Self.core()
        #expect(core.checkInvariantsIncrementally() == [])
        for key in ["alice", "bob"] {
            _ = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: key, values: [:])), at: Self.t0)
            #expect(core.checkInvariantsIncrementally() == [], "after adding \(key)")
        }
        #expect(core.checkInvariants() == [])
    }

    /// Issue 36: an operator's order naming a template (`ctl submit TEMPLATE`) is refused with
    /// the way to what runs, an instance `TEMPLATE[KEY]`; another unknown name stays not declared.
    @Test func anOrderNamingATemplatePointsAtItsInstances() {
        var core = Self.core()
        var effects: [SchedulerEffect] = []
        #expect(throws: ControlRefusal.template(identifier: "app.feed.refresh")) {
            try core.launchNow("app.feed.refresh", at: Self.t0, into: &effects)
        }
        let refusal = core.undeclared("app.feed.refresh")
        #expect(refusal.code == "not-declared")
        #expect(refusal.description.contains("app.feed.refresh is a template, not a job"), "\(refusal)")
        #expect(refusal.description.contains("app.feed.refresh[KEY]"), "\(refusal)")
        #expect(core.undeclared("app.nothing") == .notDeclared(identifier: "app.nothing"))
    }

    @Test func instancesShareTheTemplatesRulesAndAreExemptFromTheNamespaceLimit() {
        var core = Self.core()
        for key in ["a", "b", "c"] {
            _ = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: key, values: [:])), at: Self.t0)
        }
        // app-refresh allows 1 pending per namespace; the template's instances are bounded by it.
        #expect(core.pendingCount == 3)
        // The invariants agree (found by `simulate` of a 10,000-instance template).
        #expect(core.checkInvariants() == [])
        #expect(core.definitions.rules.count == 1)
        #expect(core.definitions["app.feed.refresh[b]"]?.retry == Self.template.retry)
    }

    @Test func addingAnExistingInstanceKeepsItsRequestAndStreak() {
        var core = Self.core()
        let alice = InstanceRecord(template: "app.feed.refresh", key: "alice", values: [:])
        _ = core.handle(.addInstance(alice), at: Self.t0)
        let before = core.pending("app.feed.refresh[alice]")
        let effects = core.handle(.addInstance(alice), at: Self.t0 + .seconds(5))
        #expect(effects == [.log(.instance(.kept(identifier: "app.feed.refresh[alice]", updated: false)))])
        #expect(core.pending("app.feed.refresh[alice]") == before)
    }

    @Test func removingAnInstanceCancelsItsRequestForgetsItsStreakAndKeepsItsRunToFinish() {
        var core = Self.core()
        _ = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: "alice", values: [:])), at: Self.t0)
        _ = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: "bob", values: [:])), at: Self.t0)
        // Both launch; alice fails (a retry streak of 1 and a retry pending), bob runs on.
        _ = core.handle(.timerFired, at: Self.t0)
        _ = core.handle(.runFinished(runID: 1, exit: .exited(1)), at: Self.t0 + .seconds(1))
        #expect(core.pending("app.feed.refresh[alice]")?.origin == .retry)
        let effects = core.handle(.removeInstance(template: "app.feed.refresh", key: "alice"), at: Self.t0 + .seconds(2))
        #expect(effects == [
            .persist(.deletePending(identifier: "app.feed.refresh[alice]")),
            .log(.cancelled(identifier: "app.feed.refresh[alice]")),
            .persist(.failureStreak(identifier: "app.feed.refresh[alice]", count: 0)),
            .persist(.deleteInstance(template: "app.feed.refresh", key: "alice")),
            .log(.instance(.removed(identifier: "app.feed.refresh[alice]", cancelled: true, running: nil))),
        ])
        // bob's run in flight finishes; nothing follows it once bob is removed.
        let bob = core.handle(.removeInstance(template: "app.feed.refresh", key: "bob"), at: Self.t0 + .seconds(3))
        #expect(bob.contains(.log(.instance(.removed(identifier: "app.feed.refresh[bob]", cancelled: true, running: 2)))))
        let end = core.handle(.runFinished(runID: 2, exit: .exited(0)), at: Self.t0 + .seconds(4))
        #expect(!end.contains { if case .persist(.savePending) = $0 { true } else { false } })
        #expect(core.pendingCount == 0)
        #expect(core.instances(of: "app.feed.refresh") == [])
    }

    @Test func refusalsChangeNothingAndAreLogged() {
        var core = Self.core()
        #expect(core.handle(.addInstance(InstanceRecord(template: "app.nope", key: "x", values: [:])), at: Self.t0)
            == [.log(.instance(.refused(.unknownTemplate("app.nope"))))])
        let bad = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: "a b", values: [:])), at: Self.t0)
        #expect(bad.count == 1)
        #expect(core.handle(.removeInstance(template: "app.feed.refresh", key: "zed"), at: Self.t0)
            == [.log(.instance(.refused(.unknownInstance(template: "app.feed.refresh", key: "zed"))))])
        #expect(core.pendingCount == 0)
    }

    @Test func keysAreASafeAlphabetOfOneTo128Bytes() {
        #expect(InstanceName.keyProblem("alice@example.com") == nil)
        #expect(InstanceName.keyProblem("user-1_2.x") == nil)
        #expect(InstanceName.keyProblem(String(repeating: "k", count: 128)) == nil)
        #expect(InstanceName.keyProblem(String(repeating: "k", count: 129)) != nil)
        for bad in ["", "a/b", "a b", "a\"b", "a;b", "ä", "a\nb", "../x", "a]b"] where bad != "../x" {
            #expect(InstanceName.keyProblem(bad) != nil, "\(bad)")
        }
    }

    @Test func severalParametersNeedEveryValue() {
        var core = SchedulerCore(configuration: SchedulerConfiguration())
        let definition = TaskDefinition(identifier: "app.sync", namespace: "app.sync")
        _ = core.handle(.declareTemplate(definition, TemplateSpec(parameters: ["user", "region"])), at: Self.t0)
        _ = core.handle(.restore(SchedulerCore.RestoredState()), at: Self.t0)
        var effects: [SchedulerEffect] = []
        #expect(throws: InstanceError.self) {
            try core.addInstance(InstanceRecord(template: "app.sync", key: "k1", values: ["user": "alice"]), at: Self.t0, into: &effects)
        }
        #expect(effects.isEmpty)
        try? core.addInstance(InstanceRecord(template: "app.sync", key: "k1", values: ["user": "alice", "region": "eu"]),
                              at: Self.t0, into: &effects)
        #expect(core.instance("app.sync[k1]")?.values == ["user": "alice", "region": "eu"])
        // Added again with other values: kept, values replaced and saved.
        effects.removeAll()
        try? core.addInstance(InstanceRecord(template: "app.sync", key: "k1", values: ["user": "alice", "region": "us"]),
                              at: Self.t0, into: &effects)
        #expect(effects == [
            .persist(.saveInstance(InstanceRecord(template: "app.sync", key: "k1", values: ["user": "alice", "region": "us"]))),
            .log(.instance(.kept(identifier: "app.sync[k1]", updated: true))),
        ])
    }

    /// After a restart (kill -9 included) the store gives back the instances with the pending
    /// requests: a retry keeps its backoff, the streak its count, and nothing is seeded anew.
    @Test func aRestoreBringsBackInstancesWithTheirRequestsAndBackoff() {
        let retry = Self.pending("app.feed.refresh[alice]", earliest: Self.t0 + .seconds(60), sequence: 7, origin: .retry)
        let state = SchedulerCore.RestoredState(
            pending: [retry], failureStreaks: ["app.feed.refresh[alice]": 1],
            instances: [InstanceRecord(template: "app.feed.refresh", key: "alice", values: ["user": "alice"]),
                        InstanceRecord(template: "app.feed.refresh", key: "bob", values: ["user": "bob"])])
        var core = Self.core(state)
        #expect(core.pending("app.feed.refresh[alice]") == retry)
        #expect(core.instances(of: "app.feed.refresh")?.map(\.key) == ["alice", "bob"])
        // bob had no request: the load's seeding gives it its first; alice keeps its retry.
        let seeded = core.handle(.seedInstances(template: "app.feed.refresh", replacing: false), at: Self.t0)
        let bob = Self.pending("app.feed.refresh[bob]", earliest: Self.t0, sequence: 8)
        #expect(seeded == [.persist(.savePending(bob)), .log(.submitted(bob, replaced: false)), .armTimer(at: Self.t0)])
        #expect(core.pending("app.feed.refresh[alice]") == retry)
    }

    /// Instances saved while their template is not loaded are kept (not dropped) and come back
    /// with it; their requests, like any undeclared job's, are dropped.
    @Test func instancesOfAnUndeclaredTemplateAreKeptUndeclared() {
        var core = SchedulerCore(configuration: SchedulerConfiguration())
        let state = SchedulerCore.RestoredState(instances: [InstanceRecord(template: "app.feed.refresh", key: "alice", values: ["user": "alice"])])
        _ = core.handle(.restore(state), at: Self.t0)
        #expect(!core.definitions.contains("app.feed.refresh[alice]"))
        _ = core.handle(.declareTemplate(Self.template, Self.spec), at: Self.t0)
        #expect(core.definitions.contains("app.feed.refresh[alice]"))
        // Withdrawn: its request cancelled, the instance kept.
        _ = core.handle(.seedInstances(template: "app.feed.refresh", replacing: false), at: Self.t0)
        let withdrawn = core.handle(.undeclareTemplate(identifier: "app.feed.refresh"), at: Self.t0)
        #expect(withdrawn.prefix(2) == [.persist(.deletePending(identifier: "app.feed.refresh[alice]")),
                                        .log(.cancelled(identifier: "app.feed.refresh[alice]"))])
        #expect(core.instances(of: "app.feed.refresh")?.count == 1)
        #expect(!core.definitions.contains("app.feed.refresh[alice]"))
    }

    @Test func placeholdersFillEachArgvElementAndEscapeBraces() {
        let job = CommandJob(argv: ["/bin/refresh", "--user={user}", "{{x}", "{region}-{user}", "a b; rm -rf /"],
                             environment: ["U": "{user}", "PLAIN": "x"])
        let filled = job.filled(["user": "alice", "region": "eu"])
        #expect(filled.argv == ["/bin/refresh", "--user=alice", "{x}", "eu-alice", "a b; rm -rf /"])
        #expect(filled.environment == ["U": "alice", "PLAIN": "x"])
        #expect(InstanceName.split("app.feed.refresh[alice]")! == ("app.feed.refresh", "alice"))
        #expect(InstanceName.split("app.feed.refresh") == nil)
    }
}
