/// What the activity machine asks the runtime to do, in order. As for the scheduler, the
/// runtime commits every `persist` of one event in one transaction before acting on the rest.
package enum ActivityEffect: Sendable, Hashable {
    /// A durable record change (table `ActivityChange.table`, keyed by activity id).
    case persist(ActivityChange)
    /// Write this activity's JSON file into the shared container, atomically. When its state
    /// is `dismissed` the activity is gone: the runtime removes the file (or writes it once
    /// more as dismissed; widgets must treat it as removed).
    case publish(Activity)
    /// A state change, for observers and the simulation report.
    case transition(ActivityTransition)
    case log(ActivityLog)
}
