
/// Both clocks read at one moment, by the host: the wall clock (CLOCK_REALTIME) and the
/// monotonic clock (CLOCK_MONOTONIC, which is never set and stops while the machine sleeps).
package struct ClockReading: Sendable, Hashable {
    package var wall: Instant
    /// Time since an arbitrary origin (boot): only the difference between readings means anything.
    package var monotonic: Duration

    package init(wall: Instant, monotonic: Duration) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// wall − monotonic, in milliseconds: constant while nobody sets the clock or sleeps.
    var offset: Int64 { wall.milliseconds - monotonic.wholeMilliseconds }
}

/// Decides from the host's clock readings when the wall clock moved apart from the monotonic
/// one (a step, or a resume from suspend), and what it would read without the move.
///
/// The host reports two kinds of reading. A notice that the wall clock was set (Linux: a timerfd
/// armed with `TFD_TIMER_CANCEL_ON_SET`; since Linux 5.14 a resume cancels it too) is always a
/// change. A reading at a wake-up is a change only when the offset drifted more than `tolerance`
/// since the last change: less is NTP slewing or scheduling noise; more is a step or a resume no
/// notice announced (an older kernel, a missed notice). `expected` is the monotonic clock plus
/// the offset from before the change. Pure: the runtime feeds it and acts on its answer, on
/// whichever host, so the simulator runs the same rule.
package struct ClockStepDetector: Sendable, Hashable {
    /// Offset drift at a wake-up up to this is not a change.
    package static let tolerance: Duration = .seconds(1)

    /// What the host saw when it read the clocks.
    package enum Notice: Sendable, Hashable {
        /// The one wake-up fired: check the offset.
        case wakeUp
        /// The kernel said the wall clock was set: always a change.
        case clockSet
    }

    /// wall − monotonic (ms) at the start or the last change; nil before the first reading.
    package private(set) var offset: Int64?

    package init() {}

    /// Starts from `baseline` (read when the host attaches).
    package init(baseline: ClockReading) { offset = baseline.offset }

    /// The wall-clock reading the runtime must be told of as `.clockChanged(expected:)`, or nil
    /// when nothing changed. The first reading without a baseline only sets it.
    package mutating func observe(_ reading: ClockReading, _ notice: Notice) -> Instant? {
        let now = reading.offset
        guard let previous = offset else {
            offset = now
            return nil
        }
        if notice == .wakeUp, abs(now - previous) <= Self.tolerance.wholeMilliseconds { return nil }
        offset = now
        return Instant(milliseconds: reading.monotonic.wholeMilliseconds + previous)
    }
}
