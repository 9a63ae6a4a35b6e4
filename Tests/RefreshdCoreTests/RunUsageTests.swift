import Testing
@testable import RefreshdCore

/// What a run used, reported by the host with its end (issue 35): the core keeps it with the
/// run, and decides that a run the kernel killed a process of over its memory limit is
/// `crashed` with the reason "memory limit" (the host only reports the kill).
@Suite struct RunUsageTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let job = TaskDefinition(identifier: "app.job", kind: .processing, allowance: .seconds(30), grace: .seconds(5))

    /// A machine with the job's run in flight since `t0`, that persists and logs everything.
    static func runningMachine() throws -> RuntimeMachine {
        var machine = RuntimeMachine(scheduler: SchedulerCore(configuration: SchedulerConfiguration(), definitions: [job]))
        var effects: [SchedulerEffect] = []
        machine.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        try machine.submit(TaskRequest(identifier: job.identifier, kind: .processing), at: t0, into: &effects)
        machine.handle(.timerFired, at: t0, into: &effects)
        #expect(effects.contains { if case .launch = $0 { true } else { false } })
        return machine
    }

    /// The run's end as the core records and logs it.
    static func end(_ machine: inout RuntimeMachine, exit: RunExit, usage: RunUsage, at: Instant = t0 + .seconds(2))
        -> (change: StateChange?, log: LogMessage?) {
        var effects: [SchedulerEffect] = []
        machine.handle(.runFinished(runID: 1, exit: exit, usage: usage), at: at, into: &effects)
        let change = effects.lazy.compactMap { effect -> StateChange? in
            if case let .persist(change) = effect, case .runEnded = change { change } else { nil }
        }.first
        let log = effects.lazy.compactMap { effect -> LogMessage? in
            if case let .log(message) = effect, case .finished = message { message } else { nil }
        }.first
        return (change, log)
    }

    @Test func aMemoryLimitKillCrashesTheRunWhateverItsLeaderSaid() throws {
        var machine = try Self.runningMachine()
        let usage = RunUsage(cpuMicroseconds: 210_000, peakMemoryBytes: 32 << 20, memoryLimitKills: 1)
        // A shell reports its child's SIGKILL as status 137: the kill decides, not the status.
        let (change, log) = Self.end(&machine, exit: .exited(137), usage: usage)
        #expect(change == .runEnded(runID: 1, identifier: "app.job", ended: Self.t0 + .seconds(2), outcome: .crashed,
                                    exitStatus: 137, signal: nil, reason: "memory limit", usage: usage))
        #expect(log?.description == "finished app.job run 1: crashed (memory limit, exit 137) after 2.000s; cpu 0.21s, peak memory 32.0 MiB")
    }

    @Test func usageIsKeptWithAnOrdinaryEnd() throws {
        var machine = try Self.runningMachine()
        let usage = RunUsage(cpuMicroseconds: 1_234_567, peakMemoryBytes: 5_000_000)
        let (change, log) = Self.end(&machine, exit: .exited(0), usage: usage)
        #expect(change == .runEnded(runID: 1, identifier: "app.job", ended: Self.t0 + .seconds(2), outcome: .success,
                                    exitStatus: 0, signal: nil, reason: nil, usage: usage))
        #expect(log?.description == "finished app.job run 1: success (exit 0) after 2.000s; cpu 1.23s, peak memory 4.8 MiB")
    }

    /// A run refreshd had already ended (its expiration went out) is `expired`, even if the
    /// limit killed it meanwhile: refreshd's own decision came first.
    @Test func anExpiredRunStaysExpired() throws {
        var machine = try Self.runningMachine()
        var effects: [SchedulerEffect] = []
        machine.handle(.timerFired, at: Self.t0 + .seconds(30), into: &effects)
        #expect(effects.contains(.expire(runID: 1)))
        let (change, _) = Self.end(&machine, exit: .signaled(9), usage: RunUsage(memoryLimitKills: 1), at: Self.t0 + .seconds(31))
        guard case let .runEnded(_, _, _, outcome, _, _, _, reason, _)? = change else {
            Issue.record("no run end: \(String(describing: change))")
            return
        }
        #expect(outcome == .expired && reason == nil)
    }

    @Test func sizesAndSecondsAreWrittenForPeople() {
        #expect(RunUsage.seconds(0) == "0.00s")
        #expect(RunUsage.seconds(205_000) == "0.21s")
        #expect(RunUsage.seconds(61_000_000) == "61.00s")
        #expect(RunUsage.size(512) == "512 B")
        #expect(RunUsage.size(1536) == "1.5 KiB")
        #expect(RunUsage.size(1 << 30) == "1.0 GiB")
        #expect(RunUsage.none.summary == nil)
    }
}
