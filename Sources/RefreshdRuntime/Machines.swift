import RefreshdCore

/// The runtime's state machines, composed: one event type in, one effect list out, one
/// earliest deadline for the single wake-up timer.
///
/// Today the scheduler core is the only machine; widget timelines and live activities join it
/// here as machines of their own (never as cases inside `SchedulerCore`), each reporting its
/// next deadline, so they never fight over the timer.
struct Machines: Sendable {
    var scheduler: SchedulerCore

    /// Routes an event to the machine it belongs to; appends the effects in order.
    mutating func handle(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        scheduler.handle(event, at: now, into: &effects)
    }

    /// The earliest instant at which any machine must act without an outside event.
    var nextDeadline: Instant? { scheduler.nextWakeUp }
}
