import Foundation
import Testing
@testable import RefreshdCore

/// A large batch of instances (issue 32: 1,000,000 added through one of three nodes): its log
/// lines folded into one a template, its payload to another shard's leader written and read
/// without Foundation, and its split by shard.
@Suite struct InstanceBatchTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let template = TaskDefinition(identifier: "app.feed", namespace: "app.feed",
                                         allowance: .seconds(30), resubmit: .after(.seconds(3600)))

    /// Machines with the template `app.feed` (one parameter, `user`) declared and restored.
    static func machines() -> Machines {
        var m = Machines(scheduler: SchedulerCore(configuration: SchedulerConfiguration()))
        var effects: [SchedulerEffect] = []
        m.handle(.declareTemplate(template, TemplateSpec(parameters: ["user"])), at: t0, into: &effects)
        m.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        return m
    }

    static func adds(_ count: Int, from first: Int = 0) -> InstanceLines {
        InstanceLines(template: "app.feed", add: (first..<first + count).map { InstanceRecord(template: "app.feed", key: "u\($0)", values: [:]) })
    }

    static func logs(_ effects: [SchedulerEffect]) -> [LogMessage] {
        effects.compactMap { if case let .log(message) = $0 { message } else { nil } }
    }

    @Test func aBatchOfAHundredIsLoggedOneByOne() {
        var m = Self.machines()
        var effects: [SchedulerEffect] = []
        m.applyInstanceLines([Self.adds(100)], at: Self.t0, into: &effects)
        let logs = Self.logs(effects)
        #expect(logs.count == 200)  // each: added, submitted
        #expect(logs.first == .instance(.added(identifier: "app.feed[u0]")))
    }

    @Test func aLargerBatchIsOneLineATemplateAndEveryChangeIsStillCommitted() {
        var m = Self.machines()
        var effects: [SchedulerEffect] = []
        let removal = InstanceLines(template: "app.feed", remove: ["u0", "nobody"])
        m.applyInstanceLines([Self.adds(150), removal], at: Self.t0, into: &effects)
        // One line for the 151 changes; the refusal of an unknown key is its own line, in place.
        #expect(Self.logs(effects) == [
            .instance(.refused(.unknownInstance(template: "app.feed", key: "nobody"))),
            .instance(.batch(template: "app.feed", added: 150, kept: 0, removed: 1, first: "u0", last: "u0")),
        ])
        let saved = effects.filter { if case .persist(.saveInstance) = $0 { true } else { false } }
        let pending = effects.filter { if case .persist(.savePending) = $0 { true } else { false } }
        #expect(saved.count == 150)
        #expect(pending.count == 150)
        #expect(m.scheduler.instances(of: "app.feed")?.count == 149)
        #expect(InstanceLog.batch(template: "app.feed", added: 150, kept: 0, removed: 1, first: "u0", last: "u149").description
            == "instances of app.feed: 150 added, 0 kept, 0 removed in one batch (keys \"u0\" to \"u149\"; one line for the batch, not one an instance)"
            .replacingOccurrences(of: "0 removed", with: "1 removed"))
    }

    @Test func aFoldLeavesOtherJobsLinesAlone() {
        let other = PendingRequest(identifier: "app.job", namespace: "app", kind: .appRefresh, earliest: Self.t0,
                                   submitted: Self.t0, sequence: 1, requiresExternalPower: false,
                                   requiresNetworkConnectivity: false, origin: .submitted)
        var effects: [SchedulerEffect] = [.log(.submitted(other, replaced: false))]
        for i in 0..<101 { effects.append(.log(.instance(.kept(identifier: "app.feed[k\(i)]", updated: false)))) }
        effects.append(.log(.cancelled(identifier: "app.job")))
        InstanceLog.foldBatch(&effects, from: 0)
        #expect(effects == [
            .log(.submitted(other, replaced: false)),
            .log(.cancelled(identifier: "app.job")),
            .log(.instance(.batch(template: "app.feed", added: 0, kept: 101, removed: 0, first: "k0", last: "k100"))),
        ])
    }

    /// The payload is what `JSONSerialization` writes (sorted keys, `/` unescaped), byte for
    /// byte; what it wrote before (`/` escaped) reads back the same, so nodes of either build
    /// read each other's commands; escapes and values survive the trip.
    @Test func aPayloadIsFoundationsTextAndReadsBackExactly() throws {
        let lines = [
            InstanceLines(template: "app.feed", add: [
                InstanceRecord(template: "app.feed", key: "alice", values: [:]),
                InstanceRecord(template: "app.feed", key: "b@b", values: ["region": "eu \"west\"\n", "user": "bob/é"]),
            ], remove: ["carol"]),
            InstanceLines(template: "app.other", set: [InstanceRecord(template: "app.other", key: "k", values: ["tab": "\t\u{1}"])]),
        ]
        let payload = InstanceLines.payload(lines)
        let object = ["instance-lines": lines.map(\.object)]
        let foundation = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(payload == String(decoding: foundation, as: UTF8.self))
        let fast = try #require(InstanceLines.fastLines(payload))
        #expect(fast == lines)
        #expect(InstanceLines.lines(ofPayload: payload) == lines)
        let before = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        #expect(before.contains(#"bob\/é"#))
        #expect(InstanceLines.lines(ofPayload: before) == lines)
    }

    /// Outside the fast path's shape (a number where a string goes), Foundation and `read` decide:
    /// the bad line is dropped, the good one kept, as before.
    @Test func aPayloadOutsideTheFastPathIsReadByTheReferenceRules() {
        let text = #"{"instance-lines":[{"add":[{"key":"a","user":7}],"instances":"app.feed"},{"instances":"app.feed","remove":["b"]}]}"#
        #expect(InstanceLines.fastLines(text) == nil)
        #expect(InstanceLines.lines(ofPayload: text) == [InstanceLines(template: "app.feed", remove: ["b"])])
        #expect(InstanceLines.lines(ofPayload: #"{"v":1,"command":"submit","identifier":"x"}"#) == nil)
    }

    @Test func aSplitPutsEachInstanceInItsShardOnceInOrder() {
        let map = ShardMap(shardCount: 16)
        let lines = [Self.adds(4000), InstanceLines(template: "app.feed", remove: ["u1", "u2"]),
                     InstanceLines(template: "app.feed", set: [InstanceRecord(template: "app.feed", key: "u3", values: [:])])]
        let parts = map.split(lines)
        #expect(parts.values.map { $0.reduce(0) { $0 + $1.add.count } }.reduce(0, +) == 4000)
        for (shard, part) in parts {
            for line in part {
                #expect(line.add.allSatisfy { map.shard(of: $0.identifier) == shard })
                #expect(line.add.map(\.key) == Self.adds(4000).add.filter { map.shard(of: $0.identifier) == shard }.map(\.key)
                    || line.add.isEmpty)
                #expect(line.remove.allSatisfy { map.shard(of: "app.feed[\($0)]") == shard })
            }
        }
        // A `set` reaches every shard; only its own instance's shard lists it.
        let sets = parts.values.flatMap { $0 }.compactMap(\.set)
        #expect(sets.count == 16)
        #expect(sets.map(\.count).reduce(0, +) == 1)
    }
}
