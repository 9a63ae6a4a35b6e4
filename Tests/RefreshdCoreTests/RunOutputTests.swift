import Testing
@testable import RefreshdCore

/// Issue 33, item 2: what the store keeps of a run's output is the runtime machine's rule. The
/// lines a run printed (as logged) are kept, bounded by the setting's lines and 64 KiB, and
/// committed with the accepted results lines in the run's end's own effects.
@Suite struct RunOutputTests {
    static let t0 = RuntimeMachineTests.t0

    /// A machine that persists (as with a store), keeping `lines` lines of each run.
    static func machine(keeping lines: Int) -> RuntimeMachine {
        var configuration = SchedulerConfiguration()
        configuration.emitsRoutineLogs = false
        configuration.keptOutputLines = lines
        var machine = RuntimeMachine(scheduler: SchedulerCore(configuration: configuration,
                                                              definitions: [RuntimeMachineTests.job]))
        var effects: [SchedulerEffect] = []
        machine.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        return machine
    }

    static func launch(_ machine: inout RuntimeMachine) throws -> LaunchOrder {
        var effects: [SchedulerEffect] = []
        try machine.submit(TaskRequest(identifier: RuntimeMachineTests.job.identifier), at: t0, into: &effects)
        effects.removeAll()
        machine.handle(.timerFired, at: t0, into: &effects)
        return try #require(effects.compactMap { if case let .launch(order) = $0 { order } else { nil } }.first)
    }

    /// The changes the run's end commits, in order.
    static func end(_ machine: inout RuntimeMachine, _ order: LaunchOrder, results: [String]) -> [StateChange] {
        var effects: [SchedulerEffect] = []
        machine.finishRun(order.runID, exit: .exited(2), results: results, at: t0 + .seconds(2), into: &effects)
        return effects.compactMap { if case let .persist(change) = $0 { change } else { nil } }
    }

    @Test func theLastLinesAndTheResultsAreCommittedWithTheEnd() throws {
        var machine = Self.machine(keeping: 3)
        let order = try Self.launch(&machine)
        _ = machine.outputLines(order, (1...5).map { "line \($0)" }, at: Self.t0 + .milliseconds(10))
        _ = machine.outputLines(order, ["fatal: disk full"], at: Self.t0 + .seconds(1))
        let changes = Self.end(&machine, order, results: [#"{"a":1}"#, "not json"])
        let ended = try #require(changes.firstIndex { if case .runEnded = $0 { true } else { false } })
        let kept = try #require(changes.firstIndex { if case .runOutput = $0 { true } else { false } })
        #expect(ended < kept, "in the end's commit, after it")
        #expect(changes[kept] == .runOutput(runID: order.runID, output: RunOutput(
            lines: ["line 4", "line 5", "fatal: disk full"], earlier: 3, results: [#"{"a":1}"#])))
        #expect(machine.outputTails.isEmpty, "the tail is forgotten at the end")
    }

    @Test func resultsLinesAppliedLiveAreKeptBeforeTheEndsOwn() throws {
        var machine = Self.machine(keeping: 200)
        let order = try Self.launch(&machine)
        let live = #"{"activity":"start","id":"a","content":{}}"#
        #expect(machine.resultLine(order, live, at: Self.t0).taken)
        let changes = Self.end(&machine, order, results: [#"{"b":2}"#])
        #expect(changes.contains(.runOutput(runID: order.runID, output: RunOutput(results: [live, #"{"b":2}"#]))), "\(changes)")
    }

    @Test func aTailKeepsAtMost64KiBAndNoNewline() {
        var tail = RunOutput.Tail()
        let long = String(repeating: "x", count: 16 * 1024)
        tail.append(Array(repeating: long, count: 5), limit: RunOutput.maxLines)
        #expect(tail.output.lines.count == 4 && tail.output.earlier == 1)
        tail.append(["a\nb"], limit: RunOutput.maxLines)
        #expect(tail.output.lines.last == "a b" && tail.output.lines.count == 4 && tail.output.earlier == 2)
        #expect(RunOutput.split(RunOutput.joined(["", "é", "a\0b"])) == ["", "é", "a\0b"])
        #expect(RunOutput.joined([]) == nil && RunOutput.split(nil) == [])
    }

    @Test func nothingIsCommittedForASilentRunOrWhenKeepingNone() throws {
        var machine = Self.machine(keeping: 200)
        let silent = try Self.launch(&machine)
        #expect(!Self.end(&machine, silent, results: []).contains { if case .runOutput = $0 { true } else { false } })

        var none = Self.machine(keeping: 0)
        let order = try Self.launch(&none)
        _ = none.outputLines(order, ["printed"], at: Self.t0)
        #expect(none.outputTails.isEmpty)
        #expect(!Self.end(&none, order, results: [#"{"a":1}"#]).contains { if case .runOutput = $0 { true } else { false } })
    }
}
