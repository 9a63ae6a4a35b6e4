import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// Wall-clock steps at the shell boundary: the real loop, a shiftable clock, and the same entry
/// point the timerfd's ECANCELED read takes (setting the real clock would need root).
@Suite(.serialized) struct ClockWatchTests {
    final class ShiftableClock: @unchecked Sendable {
        private let lock = NSLock()
        private var shift: Int64 = 0
        func step(by ms: Int64) { lock.lock(); shift += ms; lock.unlock() }
        var source: WallClockSource {
            WallClockSource { [self] in
                lock.lock(); defer { lock.unlock() }
                return Instant(milliseconds: WallClock.now().milliseconds + shift)
            }
        }
    }

    /// A slot every 10 seconds of wall time.
    static let everyTen = Schedule("every 10s") { t in Instant(milliseconds: (t.milliseconds / 10_000 + 1) * 10_000) }

    func harness(_ clock: ShiftableClock, missed: MissedPolicy, runs: LineSink) throws -> LoopHarness {
        let def = TaskDefinition(identifier: "cal.job", kind: .processing, resubmit: .calendar(Self.everyTen), missed: missed)
        return try LoopHarness(clock: clock.source) { s in
            s.register(def) { task in runs.append("run"); task.setTaskCompleted(success: true) }
        }
    }

    /// A request for the next slot, the loop running, then the wall clock stepped an hour ahead
    /// and the timerfd's notice delivered.
    func startThenStepAnHour(_ clock: ShiftableClock, missed: MissedPolicy, runs: LineSink) throws -> LoopHarness {
        let h = try harness(clock, missed: missed, runs: runs)
        let slot = Self.everyTen.next(after: clock.source.now() + .seconds(1))!
        try h.scheduler.submit(TaskRequest(identifier: "cal.job", kind: .processing, earliestBeginDate: slot))
        h.start()
        #expect(h.wait { h.scheduler.clockWatch?.isWatching == true })
        clock.step(by: 3_600_000)
        h.scheduler.injectClockSet()
        return h
    }

    @Test func stepForwardWithSkipRunsNoMissedSlot() throws {
        let clock = ShiftableClock()
        let runs = LineSink()
        let h = try startThenStepAnHour(clock, missed: .skip, runs: runs)
        defer { h.removeDirectory() }
        #expect(h.wait { h.lines.contains("missed 360 slots of cal.job: skipped") })
        // Clocks are read to the millisecond, so the measured step may be 1 ms off an hour.
        #expect(h.lines.contains("wall clock changed by 1h00m") || h.lines.contains("wall clock changed by 59m59s"))
        usleep(200_000)
        #expect(runs.all.isEmpty)
        let next = try #require(h.scheduler.pending("cal.job")?.earliest)
        #expect(next > clock.source.now() && next <= clock.source.now() + .seconds(10))
        #expect(h.stop())
    }

    @Test func stepForwardWithOnceRunsOnceAtOnce() throws {
        let clock = ShiftableClock()
        let runs = LineSink()
        let h = try startThenStepAnHour(clock, missed: .once, runs: runs)
        defer { h.removeDirectory() }
        #expect(h.wait(timeout: 2) { runs.all.count == 1 })
        usleep(200_000)
        #expect(runs.all.count == 1)
        #expect(h.lines.contains("running once now"))
        #expect(h.stop())
    }

    @Test func stepBackDoesNotRunASlotTwice() throws {
        let clock = ShiftableClock()
        let runs = LineSink()
        let h = try harness(clock, missed: .once, runs: runs)
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "cal.job", kind: .processing))
        h.start()
        #expect(h.wait { runs.all.count == 1 })
        clock.step(by: -60_000)  // back a minute: six slots come round again on the wall clock
        h.scheduler.injectClockSet()
        #expect(h.wait { h.lines.contains("wall clock changed by -") })
        let next = try #require(h.scheduler.pending("cal.job")?.earliest)
        #expect(next > clock.source.now() + .seconds(50))  // still the slot after the one that ran
        #expect(h.stop())
    }
}
