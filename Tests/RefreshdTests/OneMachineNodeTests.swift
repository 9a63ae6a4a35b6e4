import Foundation
import Logging
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdStore
import RefreshdRuntime

/// One daemon (issue 32): one machine is a node of a cluster of one shard whose lease is the
/// state directory's lock (`MachineDatabase`), run by the same composition as a cluster node.
@Suite(.serialized) struct OneMachineNodeTests {
    /// The lock is the lease: every acquire succeeds with a new epoch (a restart fences the
    /// previous life), a renewal holds for the current epoch only, and the lease outlives any
    /// run by far; the previous holder was reaped, so interrupted runs are retried; no command
    /// is ever queued (one machine answers from its runtime).
    @Test func theStateDirectorysLockIsALeaseThatNeverLapses() throws {
        let root = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let lock = try StateDirectoryLock.acquire(directory: root)
        defer { lock.release() }
        let store = try StateStore.open(directory: root)
        defer { store.close() }
        let database = MachineDatabase(store: store)
        let now = try database.now()
        let first = try #require(try database.acquire(shard: 0, node: "refreshd", lease: MachineDatabase.forever))
        #expect(first.epoch == 1 && first.owner == "refreshd")
        #expect(first.expiresAt >= now + .seconds(99 * 365 * 86_400))
        let second = try #require(try database.acquire(shard: 0, node: "refreshd", lease: MachineDatabase.forever))
        #expect(second.epoch == 2)
        #expect(try database.renew(shard: 0, node: "refreshd", epoch: 2, lease: MachineDatabase.forever)?.epoch == 2)
        #expect(try database.renew(shard: 0, node: "refreshd", epoch: 1, lease: MachineDatabase.forever) == nil)
        #expect(try database.leases().map(\.epoch) == [2])
        #expect(try database.heartbeat(node: "refreshd", ttl: .seconds(1)) == ["refreshd"])
        #expect(database.shardCount == 1 && database.reapsPreviousOwners)
        #expect(try database.pendingCommands(shard: 0).isEmpty)
        #expect(try database.store(shard: 0, epoch: 2) as? StateStore === store)
    }

    /// `RefreshDaemon` on one machine leads its one shard through `ClusterNode`, and that
    /// shard's scheduler is the daemon's face; `stop()` stops it as SIGTERM does, and the node
    /// leaves: `run` returns.
    @Test func oneMachineIsANodeLeadingOneShard() throws {
        let root = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let jobs = root + "/Jobs", state = root + "/state"
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        try "identifier: t.one\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\n"
            .write(toFile: jobs + "/one.yaml", atomically: true, encoding: .utf8)
        let lines = LineSink()
        let daemon = RefreshDaemon(jobsDirectory: jobs, stateDirectory: state,
                                   logger: Logger(label: "test") { _ in CapturingLogHandler(sink: lines) })
        daemon.handleSignals = false
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread { try? daemon.run(); finished.signal() }
        thread.start()
        let end = Date().addingTimeInterval(10)
        while !lines.contains("refreshd started"), Date() < end { usleep(10_000) }
        #expect(lines.contains("refreshd started: 1 job from \(jobs), 1 pending"))
        let scheduler = try #require(daemon.scheduler)
        #expect(daemon.node?.terms.keys.sorted() == [0])
        #expect(daemon.node?.runtime(of: 0) === scheduler.runtime)
        #expect(scheduler.pendingTaskRequests().map(\.identifier) == ["t.one"])
        daemon.stop()
        #expect(finished.wait(timeout: .now() + 10) == .success, "run did not return after stop()")
        #expect(daemon.node?.hasLeft == true)
    }
}
