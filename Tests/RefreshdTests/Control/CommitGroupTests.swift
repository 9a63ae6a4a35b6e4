import Foundation
import Logging
import Synchronization
import Testing
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import RefreshdSimulation

/// `RefreshRuntime.grouped`, which the control socket uses for a client's pipelined requests:
/// one transaction for the group, and commit-before-act for all of it.
@Suite struct CommitGroupTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "group") { _ in SwiftLogNoOpLogHandler() })

    static func jobs(_ count: Int) -> [JobSpec] {
        (0..<count).map { i in
            JobSpec(definition: TaskDefinition(identifier: "job.\(i)", kind: .processing), command: CommandJob(argv: ["true"]))
        }
    }

    @Test func aGroupOfSubmitsIsOneTransaction() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        _ = runtime.load(Self.jobs(10))
        host.advance(by: .seconds(60))  // their first runs come and go
        runtime.cancelAll()
        let before = store.commitAttempts
        let later = Self.start + .seconds(3600)
        let (_, committed) = runtime.grouped {
            for i in 0..<10 {
                try? runtime.submit(TaskRequest(identifier: "job.\(i)", kind: .processing, earliestBeginDate: later))
            }
        }
        #expect(committed)
        #expect(store.commitAttempts == before + 1, "10 submits, one commit")
        let pending = try store.pendingRequests().count
        #expect(pending == 10, "\(pending) pending")
    }

    @Test func aFailedGroupActsOnNothingOfItAndStops() throws {
        let started = Mutex<[Int64]>([])
        let host = SimulatedHost(start: Self.start) { order, _ in
            started.withLock { $0.append(order.runID) }
            return .quickSuccess
        }
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        _ = runtime.load(Self.jobs(3))
        host.advance(by: .seconds(60))
        runtime.cancelAll()
        let runsBefore = try store.recentRuns(limit: 10).count
        let startedBefore = started.withLock { $0 }
        let next = store.commitAttempts + 1
        store.commitFault = { commit, _ in commit == next ? InMemoryStore.Failure(.injected, "disk full") : nil }
        let (_, committed) = runtime.grouped {
            try? runtime.submit(TaskRequest(identifier: "job.0", kind: .processing))
            try? runtime.submit(TaskRequest(identifier: "job.1", kind: .processing))
            try? runtime.launchNow("job.1")
        }
        #expect(!committed)
        #expect(runtime.failure != nil, "a failed commit stops the runtime")
        #expect(try store.pendingRequests().isEmpty, "nothing of the group was saved")
        #expect(try store.recentRuns(limit: 10).count == runsBefore)
        host.advance(by: .seconds(1))
        #expect(started.withLock { $0 } == startedBefore, "no process of the failed group was started")
    }
}
