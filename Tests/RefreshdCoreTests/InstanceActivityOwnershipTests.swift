import Testing
@testable import RefreshdCore

/// An instance's activities are its own (issue 23), in the composition: a line of another run
/// naming one is refused with exactly one log effect and nothing else; its own runs' lines, the
/// lines about a job's activities and the API's calls are applied as before.
@Suite struct InstanceActivityOwnershipTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// Machines with `pack-alice` started by a run of `t[alice]` and `pack-job` by `t.job`.
    static func machines() -> Machines {
        var m = Machines(scheduler: SchedulerCore(configuration: SchedulerConfiguration()))
        var effects: [SchedulerEffect] = []
        for (id, owner) in [("pack-alice", "t[alice]"), ("pack-job", "t.job")] {
            let start = ResultLine.activity(.request(ActivityRequest(id: id, typeName: "Pack", owner: owner, namespace: "t")))
            #expect(m.handleLive(start, from: owner, at: t0, into: &effects))
        }
        #expect(m.activities.activities["pack-alice"]?.state == .active)
        return m
    }

    static func update(_ id: String) -> ResultLine {
        .activity(.update(ActivityUpdate(id: id, content: #"{"by":"x"}"#, timestamp: t0 + .seconds(1))))
    }

    @Test func anotherRunsLineAboutAnInstancesActivityIsRefusedWithOneLogLine() {
        var m = Self.machines()
        for writer in ["t[mallory]", "t.job"] {
            var effects: [SchedulerEffect] = []
            #expect(m.handleLive(Self.update("pack-alice"), from: writer, at: Self.t0 + .seconds(1), into: &effects))
            #expect(effects == [.log(.activity(.refused(.notOwned(id: "pack-alice", event: .update, owner: "t[alice]", writer: writer))))])
            effects = []
            let end = ResultLine.activity(.end(id: "pack-alice", content: nil, policy: .immediate, timestamp: Self.t0 + .seconds(1)))
            #expect(m.handleLive(end, from: writer, at: Self.t0 + .seconds(1), into: &effects))
            #expect(effects == [.log(.activity(.refused(.notOwned(id: "pack-alice", event: .end, owner: "t[alice]", writer: writer))))])
        }
        #expect(m.activities.activities["pack-alice"]?.state == .active)
        #expect(m.activities.activities["pack-alice"]?.updatesApplied == 0)
    }

    @Test func itsOwnRunsAJobsActivityAndTheAPIAreAppliedAsBefore() {
        var m = Self.machines()
        var effects: [SchedulerEffect] = []
        _ = m.handleLive(Self.update("pack-alice"), from: "t[alice]", at: Self.t0 + .seconds(1), into: &effects)
        #expect(m.activities.activities["pack-alice"]?.updatesApplied == 1)
        // A job's activity stays open to another run's lines (an instance's included).
        _ = m.handleLive(Self.update("pack-job"), from: "t[mallory]", at: Self.t0 + .seconds(1), into: &effects)
        #expect(m.activities.activities["pack-job"]?.updatesApplied == 1)
        // The library's call is no line: it may update any activity.
        let api = m.handle(activity: .update(ActivityUpdate(id: "pack-alice", content: "{}", timestamp: Self.t0 + .seconds(2))),
                           at: Self.t0 + .seconds(2), into: &effects)
        #expect(api == nil)
        #expect(m.activities.activities["pack-alice"]?.updatesApplied == 2)
        #expect(!effects.contains { if case .log(.activity(.refused)) = $0 { true } else { false } })
    }
}
