import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// `simulate --exec`'s host: the simulated host whose commands are real, run by
/// `ExecutedCommands` through the libuv host's process code. The runtime hears of their output,
/// results and ends as it does under the daemon, as they happen (virtual time runs with real
/// time while they run), and its orders are carried out on them.
@Suite struct ExecutedCommandTests {
    /// The simulated harness with real commands, and every observation; `finish()` the
    /// commands at the end (nothing of them is left).
    static func harness() throws -> (SimulatedHarness, BothHostsProcessRulesTests.Seen, ExecutedCommands) {
        let h = try SimulatedHarness()
        let commands = ExecutedCommands()
        h.host.real = commands
        try h.start()
        let seen = BothHostsProcessRulesTests.Seen()
        h.runtime.observe(includingRoutine: true) { seen.add($0) }
        return (h, seen, commands)
    }

    static func script(_ text: String) -> CommandJob { CommandJob(argv: ["/bin/sh", "-c", text]) }

    /// The same flood as `anOutputFloodIsLimitedByTheRuntime` on the libuv host, with the same
    /// figures: the real reads reach the runtime's rate limit.
    @Test func anOutputFloodIsLimitedAsUnderTheDaemon() throws {
        let (h, seen, commands) = try Self.harness()
        defer { commands.finish() }
        h.runtime.register(TaskDefinition(identifier: "t.flood"), handler: .command(Self.script("seq 1 1000")))
        try h.runtime.submit(TaskRequest(identifier: "t.flood"))
        #expect(h.wait(.seconds(60)) { h.outcomes("t.flood") == [.success] })
        let logged = seen.of(.output, "t.flood")
        #expect(logged.count == 200)
        #expect(logged.first?.message == "t.flood[1] stdout: 1")
        let dropped = seen.of(.outputDropped, "t.flood")
        #expect(dropped.map(\.count) == [800])
        #expect(dropped.first?.message.hasSuffix("800 lines (2401 bytes) of output not logged: over 200 lines or 256 KiB a second") == true,
                "\(dropped.map(\.message))")
    }

    /// Each stream's lines are logged with its name at the virtual instant they were read; a
    /// live results line is applied at its instant, a refused one reported with the run's end.
    @Test func outputAndResultsArriveAtTheirOffsets() throws {
        let (h, seen, commands) = try Self.harness()
        defer { commands.finish() }
        let start = h.now
        let activity = #"{"activity": "start", "id": "exec-unit", "type": "Demo"}"#
        h.runtime.register(TaskDefinition(identifier: "t.timed"), handler: .command(Self.script(
            "echo first; sleep 0.4; echo second >&2; echo '\(activity)' >&3; echo 'not json' >&3; sleep 0.2")))
        try h.runtime.submit(TaskRequest(identifier: "t.timed"))
        #expect(h.wait(.seconds(60)) { h.outcomes("t.timed") == [.success] })
        let output = seen.of(.output, "t.timed")
        #expect(output.map(\.message) == ["t.timed[1] stdout: first", "t.timed[1] stderr: second"])
        let offsets = output.map { $0.time.duration(since: start) }
        #expect(offsets.count == 2 && offsets[0] < offsets[1] && offsets[1] >= .milliseconds(400), "\(offsets)")
        let applied = try #require(seen.of(.activity, "exec-unit").first)
        #expect(applied.time.duration(since: start) >= .milliseconds(400))
        let ended = try #require(h.runs().first { $0.identifier == "t.timed" }?.ended)
        #expect(ended.duration(since: start) >= .milliseconds(600))
        #expect(applied.time < ended)
        let refused = seen.of(.results, "t.timed").filter { $0.message.contains("result refused") }
        #expect(refused.map(\.time) == [ended], "\(seen.of(.results, "t.timed").map(\.message))")
    }

    /// An overrunning command is expired by the runtime's order: SIGTERM to its group at the
    /// deadline (the runtime's wake-up, waited for in real time), and it ends then. Nothing
    /// else sends it: without the order it would sleep its 100 s.
    @Test func anOverrunningCommandIsExpiredByTheRuntimesOrder() throws {
        let (h, _, commands) = try Self.harness()
        defer { commands.finish() }
        let start = h.now
        h.runtime.register(TaskDefinition(identifier: "t.overrun", allowance: .seconds(1), grace: .seconds(1)),
                           handler: .command(Self.script("sleep 100")))
        try h.runtime.submit(TaskRequest(identifier: "t.overrun"))
        let began = Date()
        #expect(h.wait(.seconds(10)) { h.outcomes("t.overrun") == [.expired] })
        #expect(Date().timeIntervalSince(began) < 5)
        let run = try #require(h.runs().first)
        #expect(run.signal == SIGTERM)
        let ended = try #require(run.ended?.duration(since: start))
        #expect(ended >= .seconds(1) && ended < .milliseconds(1_100), "ended at \(ended)")
        #expect(Self.groupIsGone(run.processGroup))
    }

    /// A command that ignores its expiration is killed by the runtime's order when the grace is
    /// over (SIGKILL to the group): expired at the deadline, ended at the kill, on the runtime's
    /// own instants, and nothing of it is left.
    @Test func aCommandIgnoringItsExpirationIsKilledAfterTheGrace() throws {
        let (h, _, commands) = try Self.harness()
        defer { commands.finish() }
        let start = h.now
        h.runtime.register(TaskDefinition(identifier: "t.stubborn", allowance: .seconds(1), grace: .seconds(1)),
                           handler: .command(Self.script("trap '' TERM; sleep 100")))
        try h.runtime.submit(TaskRequest(identifier: "t.stubborn"))
        let began = Date()
        #expect(h.wait(.seconds(10)) { h.outcomes("t.stubborn") == [.expired] })
        #expect(Date().timeIntervalSince(began) < 6)
        let run = try #require(h.runs().first)
        #expect(run.signal == SIGKILL)
        // Killed at the grace's end (2 s); the run ends when its fd 3 closes, a few real
        // milliseconds after the kill (as in the daemon), as they happen.
        let ended = try #require(run.ended?.duration(since: start))
        #expect(ended >= .seconds(2) && ended < .milliseconds(2_100), "ended at \(ended)")
        #expect(Self.groupIsGone(run.processGroup))
    }

    /// Whether no live process is left in the group (zombies waiting for their reaper aside)
    /// within a second: a process killed with its group may still be exiting when its run ends
    /// (its fd 3 is closed before it becomes a zombie).
    static func groupIsGone(_ group: Int32?) -> Bool {
        guard let group, group > 0 else { return false }
        for _ in 0..<100 {
            if !OrphanReaper.allProcesses().contains(where: { $0.stat.processGroup == group && !$0.stat.isZombie }) { return true }
            usleep(10_000)
        }
        return false
    }
}
