/// Everything that can happen to the scheduler. The runtime feeds these to
/// `SchedulerCore.handle`, whichever host it runs on.
///
/// Submits can be refused; as events a refusal is logged (`.rejected`). Callers that need the
/// refusal as an error use the throwing `submit` entry point instead.
package enum SchedulerEvent: Sendable, Hashable {
    /// Declares an identifier, or replaces its definition (config reload). A run in flight keeps
    /// the allowance it was launched with; its retry and next request follow the new definition.
    indirect case declare(TaskDefinition)
    /// Withdraws an identifier: its pending request is cancelled; a run in flight finishes, but
    /// nothing is resubmitted or retried for it.
    case undeclare(identifier: String)
    /// Loads durable state at start (once, after the identifiers are declared).
    indirect case restore(SchedulerCore.RestoredState)
    /// Submits a request, replacing a pending one with the same identifier.
    indirect case submit(TaskRequest)
    /// Submits a declared identifier's first request: its schedule's next slot, or now.
    case submitFirst(identifier: String)
    /// The armed wake-up fired (or the shell wants due work re-examined).
    case timerFired
    case cancel(identifier: String)
    case cancelAll(namespace: String?)
    /// The work of a run ended; the core decides the outcome. `results` are the structured
    /// results the run reported (JSON objects, one per element, already bounded and checked by
    /// the runtime), for the machines that consume them (timelines, activities). `usage` is what
    /// the host measured of the run (issue 35): kept with it, and a memory-limit kill crashes it.
    case runFinished(runID: Int64, exit: RunExit, results: [String] = [], usage: RunUsage = .none)
    case conditionsChanged(Conditions)
    /// The wall clock was stepped (either way), or the machine resumed from suspend. `expected`
    /// is what the wall clock would read without the change (the shell keeps it from the
    /// monotonic clock). Calendar slots in (expected, now] were jumped or slept over and follow
    /// their job's `MissedPolicy`; the wake-up is re-armed against the new clock.
    case clockChanged(expected: Instant)
    /// Stop: no new launches; running work gets its expiration and grace.
    case shutdown
    /// Declares or redeclares a template (issue 23): its known instances are declared with its
    /// rules; the template's own identifier is not (only instances run).
    indirect case declareTemplate(TaskDefinition, TemplateSpec)
    /// Withdraws a template: its instances' pending requests are cancelled and they are
    /// undeclared; the instances are kept and come back with the template.
    case undeclareTemplate(identifier: String)
    /// Adds an instance (and its first request); an existing one keeps its state. A refusal
    /// (unknown template, bad key or values) is logged.
    indirect case addInstance(InstanceRecord)
    /// Removes an instance: its request cancelled, its streak forgotten, its record deleted.
    case removeInstance(template: String, key: String)
    /// Gives a template's instances their first request (those without one, or all when
    /// `replacing`): after a load's restore, or a changed template.
    case seedInstances(template: String, replacing: Bool)
}
