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
    /// A slot every 10 minutes: the next one is never within a test's short wait.
    static let everyTenMinutes = Schedule("every 10m") { t in Instant(milliseconds: (t.milliseconds / 600_000 + 1) * 600_000) }

    func harness(_ clock: ShiftableClock, missed: MissedPolicy, runs: LineSink,
                 schedule: Schedule = everyTen) throws -> LoopHarness {
        let def = TaskDefinition(identifier: "cal.job", kind: .processing, resubmit: .calendar(schedule), missed: missed)
        return try LoopHarness(clock: clock.source) { s in
            s.register(def) { task in runs.append("run"); task.setTaskCompleted(success: true) }
        }
    }

    /// A request for a slot a few seconds ahead (far enough that a loaded machine does not reach
    /// it before the step), the loop running, then the wall clock stepped an hour ahead and the
    /// timerfd's notice delivered.
    func startThenStepAnHour(_ clock: ShiftableClock, missed: MissedPolicy, runs: LineSink,
                             schedule: Schedule = everyTen) throws -> (LoopHarness, Instant) {
        let h = try harness(clock, missed: missed, runs: runs, schedule: schedule)
        let slot = schedule.next(after: clock.source.now() + .seconds(3))!
        try h.scheduler.submit(TaskRequest(identifier: "cal.job", kind: .processing, earliestBeginDate: slot))
        h.start()
        #expect(h.wait { h.scheduler.clockWatch?.isWatching == true })
        clock.step(by: 3_600_000)
        h.scheduler.injectClockSet()
        return (h, slot)
    }

    @Test func stepForwardWithSkipRunsNoMissedSlot() throws {
        let clock = ShiftableClock()
        let runs = LineSink()
        let schedule = Self.everyTenMinutes
        let (h, slot) = try startThenStepAnHour(clock, missed: .skip, runs: runs, schedule: schedule)
        defer { h.removeDirectory() }
        // Every slot from the pending one to the stepped clock was jumped over (6 or 7 of them,
        // depending on where in its 10 minutes the step landed; a boundary may pass meanwhile).
        #expect(h.wait {
            let jumped = schedule.count(from: slot, through: clock.source.now())
            return h.lines.contains("missed \(jumped) slots of cal.job: skipped")
                || h.lines.contains("missed \(jumped - 1) slots of cal.job: skipped")
        })
        // Clocks are read to the millisecond, so the measured step may be 1 ms off an hour.
        #expect(h.lines.contains("wall clock changed by 1h00m") || h.lines.contains("wall clock changed by 59m59s"))
        usleep(200_000)
        #expect(runs.all.isEmpty)
        let next = try #require(h.scheduler.pending("cal.job")?.earliest)
        #expect(next == schedule.next(after: clock.source.now()))
        #expect(h.stop())
    }

    @Test func stepForwardWithOnceRunsOnceAtOnce() throws {
        let clock = ShiftableClock()
        let runs = LineSink()
        let (h, _) = try startThenStepAnHour(clock, missed: .once, runs: runs, schedule: Self.everyTenMinutes)
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
