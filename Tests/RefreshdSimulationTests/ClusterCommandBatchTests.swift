import Foundation
import Testing
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Commands that queued up for a shard's leader (issue 32) are applied in one transaction, at
/// most `ClusterNode.commandsPerCommit` of them, each still applied once.
@Suite struct ClusterCommandBatchTests {
    @Test func queuedCommandsShareOneCommitAndEachIsAppliedOnce() throws {
        let template = JobSpec(definition: TaskDefinition(identifier: "feed", kind: .processing, namespace: "feed",
                                                          allowance: .seconds(60), resubmit: .after(.seconds(3600))),
                               command: CommandJob(argv: ["work", "{user}"]), template: TemplateSpec(parameters: ["user"]))
        let db = ModelledDatabase(shardCount: 1, time: ClusterTests.t0)
        let now = ClusterTests.t0
        let node = ClusterNode(name: "a", database: db, jobs: [template], monotonic: { now },
                               makeRuntime: { _, _, store, options in try SimulatedHost(start: now).start(store: store, options: options) })
        node.start()
        let runtime = try #require(node.runtime(of: 0))
        let before = runtime.committedTransactions
        // 70 commands of 3 instances each, queued while the leader was busy elsewhere.
        let commands = (0..<70).map { n in
            ShardCommand(id: "c\(n)", shard: 0, payload: InstanceLines.payload([InstanceLines(
                template: "feed", add: (0..<3).map { InstanceRecord(template: "feed", key: "u\(n)-\($0)", values: [:]) })]))
        }
        #expect(try db.enqueueCommands(commands).count == 70)
        node.applyQueuedCommands(shard: 0)
        // 64 in the first transaction, 6 in the second (one a command before: 70).
        #expect(runtime.committedTransactions - before == 2)
        #expect(try db.pendingCommands(shard: 0).isEmpty)
        #expect(try db.committed(shard: 0).instanceCount(of: "feed") == 210)
        #expect(try db.committed(shard: 0).records(table: ShardCommand.appliedTable).count == 70)
        // Sent again (a retried request): applied once, nothing more committed.
        #expect(try db.enqueueCommands(commands).isEmpty)
        node.applyQueuedCommands(shard: 0)
        #expect(runtime.committedTransactions - before == 2)
    }
}
