import Testing
@testable import RefreshdCore

/// Orders from outside the job files (`OperatorOrder`, issue 34) are recorded by the machines
/// as world events in the order's own effects, for `simulate --replay`.
@Suite struct OperatorOrderTests {
    static let t0 = Instant(milliseconds: 1_764_892_800_000)
    static let job = TaskDefinition(identifier: "app.job", allowance: .seconds(30), resubmit: .after(.seconds(3600)))

    /// A machine that keeps state (`emitsStateChanges`), as the daemon's.
    static func machines() -> Machines {
        var configuration = SchedulerConfiguration()
        configuration.emitsRoutineLogs = false
        var machines = Machines(scheduler: SchedulerCore(configuration: configuration, definitions: [job]))
        var effects: [SchedulerEffect] = []
        machines.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        return machines
    }

    /// The world events among `effects`.
    static func world(_ effects: [SchedulerEffect]) -> [WorldEvent] {
        effects.compactMap { if case let .persist(.putRecord(record)) = $0 { WorldEvent(record) } else { nil } }
    }

    @Test func everyOrderAndAReloadReadBackFromTheirRecord() {
        let events: [WorldEvent.What] = [
            .order(.submit("app.job", earliest: Self.t0 + .hours(1))), .order(.cancel("app.job")),
            .order(.cancelAll(namespace: nil)), .order(.cancelAll(namespace: "b")), .order(.launchNow("app.job")),
            .order(.expireNow("app.job")), .order(.reloadWidgets(kind: "w", reason: .explicitAPI)),
            .order(.reloadWidgets(kind: nil, reason: .appForeground)), .reload(changed: ["a", "b\"c"]),
            // `ctl activity` and `ctl instance` (their content's and values' keys are anyone's).
            .order(.activity(.request(ActivityRequest(id: "op", typeName: "Op", owner: ActivityRequest.operatorOwner, namespace: "ops",
                                                      content: #"{"progress_%":0.1,"na\"me":"<b>"}"#, staleDate: Self.t0 + .hours(1),
                                                      startAt: Self.t0)))),
            .order(.activity(.update(ActivityUpdate(id: "op", content: #"{"progress":0.5}"#, timestamp: Self.t0)))),
            .order(.activity(.end(id: "op", content: nil, policy: .immediate, timestamp: Self.t0))),
            .order(.addInstances(template: "app.feed", keys: ["alice", "bob"], values: ["region_id": "eu", "user": "x"])),
            .order(.removeInstance(template: "app.feed", key: "alice")),
        ]
        for what in events {
            let event = WorldEvent(at: Self.t0, what: what)
            #expect(WorldEvent(event.record) == event, "\(event.record)")
        }
        #expect(WorldEvent(at: Self.t0, what: .order(.launchNow("app.job"))).record.key == "0001764892800000 simulate-launch app.job")
    }

    @Test func anOperatorsSubmitLaunchAndExpirationAreRecordedInTheirOwnEffects() throws {
        var machines = Self.machines()
        let t0 = Self.t0
        var effects: [SchedulerEffect] = []
        // A submit through the API is no order: not recorded.
        try machines.withScheduler(at: t0, into: &effects) { (core, effects) throws(SchedulerError) in
            try core.submit(TaskRequest(identifier: "app.job", earliestBeginDate: t0 + .hours(3)), at: t0, into: &effects)
        }
        #expect(Self.world(effects) == [])
        effects = []
        try machines.withScheduler(at: t0, into: &effects) { (core, effects) throws(SchedulerError) in
            try core.submit(ordered: TaskRequest(identifier: "app.job", earliestBeginDate: t0 + .hours(2)), at: t0, into: &effects)
        }
        #expect(Self.world(effects) == [WorldEvent(at: t0, what: .order(.submit("app.job", earliest: t0 + .hours(2))))])
        effects = []
        try machines.withScheduler(at: t0 + .seconds(1), into: &effects) { (core, effects) throws(ControlRefusal) in
            try core.launchNow("app.job", at: t0 + .seconds(1), into: &effects)
        }
        #expect(Self.world(effects) == [WorldEvent(at: t0 + .seconds(1), what: .order(.launchNow("app.job")))])
        effects = []
        try machines.withScheduler(at: t0 + .seconds(2), into: &effects) { (core, effects) throws(ControlRefusal) in
            try core.expireNow("app.job", at: t0 + .seconds(2), into: &effects)
        }
        #expect(Self.world(effects) == [WorldEvent(at: t0 + .seconds(2), what: .order(.expireNow("app.job")))])
    }

    @Test func aCancelIsRecordedWhenItCancelsSomething() throws {
        var machines = Self.machines()
        let t0 = Self.t0
        var effects: [SchedulerEffect] = []
        machines.handle(.cancel(identifier: "app.job"), at: t0, into: &effects)
        #expect(Self.world(effects) == [], "nothing pending: nothing cancelled, nothing recorded")
        machines.handle(.submit(TaskRequest(identifier: "app.job", earliestBeginDate: t0 + .hours(1))), at: t0, into: &effects)
        effects = []
        machines.handle(.cancel(identifier: "app.job"), at: t0 + .seconds(5), into: &effects)
        #expect(Self.world(effects) == [WorldEvent(at: t0 + .seconds(5), what: .order(.cancel("app.job")))])
        machines.handle(.submit(TaskRequest(identifier: "app.job", earliestBeginDate: t0 + .hours(1))), at: t0, into: &effects)
        effects = []
        machines.handle(.cancelAll(namespace: nil), at: t0 + .seconds(6), into: &effects)
        #expect(Self.world(effects) == [WorldEvent(at: t0 + .seconds(6), what: .order(.cancelAll(namespace: nil)))])
    }

    @Test func aReloadOfTheFilesIsRecordedWithTheJobsItChanged() {
        let machines = Self.machines()
        #expect(Self.world(machines.worldRecord(.reload(changed: ["app.a", "app.b"]), at: Self.t0))
            == [WorldEvent(at: Self.t0, what: .reload(changed: ["app.a", "app.b"]))])
        #expect(machines.worldRecord(.reload(changed: []), at: Self.t0) == [], "a reload that changed nothing")
        let plan = ReloadPlan(removed: ["app.gone"], added: [], changed: [], unchanged: 2)
        #expect(plan.changedIdentifiers == ["app.gone"])
    }
}
