
/// While something waits on power or network, conditions are read again every `interval`,
/// besides the host's notices (netlink): uevents do not reach every container, and a notice
/// missed must not hold a job forever. The period is one of the runtime's deadlines (the one
/// armed timer; at it the runtime asks the host to read conditions now), so the simulator runs
/// it as the daemon does. Pure: `Machines` feeds it the scheduler's watch changes and wake-ups.
@usableFromInline package struct ConditionsReread: Sendable, Hashable {
    /// One minute, as the libuv host's own fallback timer had it: the one default of the
    /// embedding API's, the runtime's and the daemon's options (usable from their defaults).
    @usableFromInline package static let defaultInterval: Duration = .seconds(60)

    /// The period (at least a millisecond).
    package let interval: Duration
    /// When conditions are to be read next; nil while nothing watches them.
    package private(set) var due: Instant?

    package init(interval: Duration = Self.defaultInterval) {
        self.interval = max(interval, .milliseconds(1))
    }

    /// The scheduler started (the host reads at once) or stopped watching conditions at `now`.
    package mutating func watching(_ on: Bool, at now: Instant) { due = on ? now + interval : nil }

    /// The wall clock was stepped (or the machine resumed): the period counts from `now` again,
    /// so a step back does not put the next re-read off by the step (the libuv host's own timer,
    /// which this replaced, ran on the monotonic clock).
    package mutating func clockChanged(at now: Instant) {
        if due != nil { due = now + interval }
    }

    /// The one wake-up fired at `now`: whether conditions are to be read now. The next re-read
    /// is then due an interval later, counted from now (a late wake-up does not bunch them).
    package mutating func timerFired(at now: Instant) -> Bool {
        guard let due, due <= now else { return false }
        self.due = now + interval
        return true
    }
}
