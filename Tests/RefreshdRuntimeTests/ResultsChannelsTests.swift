import Testing
import RefreshdCore
@testable import RefreshdRuntime

/// The results channel rules as input -> exact decisions (`ResultsChannels`, pure): the cap and
/// its marker, the group's kill at the leader's exit, the grace on the runtime's own deadline.
@Suite struct ResultsChannelsTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    static func read(_ channels: inout ResultsChannels, _ runID: Int64, _ text: String) {
        Array(text.utf8).withUnsafeBytes { channels.read(runID, $0) }
    }

    @Test func theChannelClosedBeforeTheExitEndsTheRunAtTheExit() {
        var channels = ResultsChannels()
        var effects: [SchedulerEffect] = []
        Self.read(&channels, 7, "{\"a\":1}\n{\"b\":2}\n")
        channels.closed(7, into: &effects)
        #expect(effects.isEmpty)  // the leader still runs
        channels.leaderExited(7, exit: .exited(0), at: Self.t0, into: &effects)
        #expect(effects == [.killGroup(runID: 7), .processEnded(runID: 7, exit: .exited(0), results: ["{\"a\":1}", "{\"b\":2}"])])
        #expect(channels.nextDeadline == nil)
        #expect(channels.channels.isEmpty)
    }

    @Test func theExitKillsTheGroupAndTheCloseThatFollowsEndsTheRun() {
        var channels = ResultsChannels()
        var effects: [SchedulerEffect] = []
        channels.leaderExited(3, exit: .signaled(9), at: Self.t0, into: &effects)
        #expect(effects == [.killGroup(runID: 3)])
        #expect(channels.nextDeadline == Self.t0 + .milliseconds(500))  // the grace: one of the runtime's deadlines
        effects.removeAll()
        channels.closed(3, into: &effects)
        #expect(effects == [.processEnded(runID: 3, exit: .signaled(9), results: [])])
        #expect(channels.nextDeadline == nil)
    }

    @Test func aChannelHeldOpenEndsTheRunWhenTheGraceIsOver() {
        var channels = ResultsChannels()
        var effects: [SchedulerEffect] = []
        Self.read(&channels, 1, "{\"kept\":true}\npartial")
        channels.leaderExited(1, exit: .exited(0), at: Self.t0, into: &effects)
        channels.leaderExited(2, exit: .exited(1), at: Self.t0 + .milliseconds(100), into: &effects)
        effects.removeAll()
        channels.timerFired(at: Self.t0 + .milliseconds(499), into: &effects)
        #expect(effects.isEmpty)
        channels.timerFired(at: Self.t0 + .milliseconds(500), into: &effects)
        #expect(effects == [.closeResults(runID: 1), .processEnded(runID: 1, exit: .exited(0), results: ["{\"kept\":true}", "partial"])])
        #expect(channels.nextDeadline == Self.t0 + .milliseconds(600))  // run 2 still waits
        effects.removeAll()
        channels.closed(1, into: &effects)  // a late close of an ended run changes nothing
        channels.forget(1)
        #expect(channels.channels.keys.sorted() == [2])
    }

    @Test func whatPassesTheCapIsDroppedAndMarked() {
        var channels = ResultsChannels()
        var effects: [SchedulerEffect] = []
        let line = String(repeating: "x", count: RunResults.maxLineBytes) + "\n"
        for _ in 0..<(RunResults.maxLines + 3) { Self.read(&channels, 4, line) }
        channels.closed(4, into: &effects)
        channels.leaderExited(4, exit: .exited(0), at: Self.t0, into: &effects)
        guard case let .processEnded(_, _, results) = effects.last else {
            Issue.record("no end: \(effects)")
            return
        }
        #expect(results.count == RunResults.maxLines + 1)
        #expect(results.last == RunResults.truncatedMarker)
        #expect(ResultsChannels.capacity == 64 * 16_385)
    }

    @Test func aLiveLineTakenLeavesTheBufferSoItNeverFillsIt() {
        var channels = ResultsChannels()
        var effects: [SchedulerEffect] = []
        let live = "{\"activity\":\"update\"}" + String(repeating: " ", count: 16_000) + "\n"
        for _ in 0..<200 {
            Self.read(&channels, 5, live)
            while channels.nextLine(5) != nil { channels.takeLine(5) }
        }
        Self.read(&channels, 5, "{\"end\":1}\n" + String(repeating: "y", count: RunResults.maxLineBytes + 1) + "\n")
        #expect(channels.nextLine(5) == "{\"end\":1}")
        #expect(channels.nextLine(5) == nil)  // too long to be a result: left for the end's check
        channels.closed(5, into: &effects)
        channels.leaderExited(5, exit: .exited(0), at: Self.t0, into: &effects)
        guard case let .processEnded(_, _, results) = effects.last else {
            Issue.record("no end: \(effects)")
            return
        }
        #expect(results.count == 2)
        #expect(results.first == "{\"end\":1}")
        #expect(!results.contains(RunResults.truncatedMarker))
    }
}
