import RefreshdCore

/// What `refreshd why` knows about one job, gathered from a live refreshd (its core's snapshot,
/// definitions, store and recent observations) or, read-only, from the state files and the job
/// files. `WhyExplainer` turns it into a paragraph; gathering and explaining stay apart so every
/// holding reason is a unit test on plain values.
public struct WhyFacts: Sendable {
    public var identifier: String
    public var now: Instant
    /// Asked of the running refreshd (false: from the state files, refreshd is not running).
    public var live: Bool
    /// The job's definition; nil when it is not declared (or unknown: no job files read).
    public var definition: TaskDefinition?
    /// Whether the identifier is known to be undeclared (live, or the job files were read).
    public var knownUndeclared: Bool
    /// Its pending request, with its place in the core when live (nil place from the files).
    public var pending: SchedulerSnapshot.Pending?
    /// Its run in flight, if any (live only; from the files, a run without an end).
    public var running: SchedulerSnapshot.Run?
    /// Every run in flight, and the cap (live only).
    public var runsInFlight: [SchedulerSnapshot.Run]
    public var maxConcurrentRuns: Int?
    /// The conditions last read (live only).
    public var conditions: Conditions?
    /// Consecutive failed attempts.
    public var failureStreak: Int
    /// Its most recent runs, newest first.
    public var recentRuns: [StatusReport.Run]
    /// Calendar slots missed by day, newest first (from the counters).
    public var missedByDay: [(day: String, count: Int)]
    /// Its most recent observations, oldest first (live only).
    public var recentEvents: [RuntimeObservation]
    /// When the identifier is a widget provider (`<job>#<family>`): its widget's status.
    public var widget: TimelineSnapshot.Widget?

    public init(identifier: String, now: Instant, live: Bool, definition: TaskDefinition? = nil,
                knownUndeclared: Bool = false, pending: SchedulerSnapshot.Pending? = nil,
                running: SchedulerSnapshot.Run? = nil, runsInFlight: [SchedulerSnapshot.Run] = [],
                maxConcurrentRuns: Int? = nil, conditions: Conditions? = nil, failureStreak: Int = 0,
                recentRuns: [StatusReport.Run] = [], missedByDay: [(day: String, count: Int)] = [],
                recentEvents: [RuntimeObservation] = [], widget: TimelineSnapshot.Widget? = nil) {
        self.identifier = identifier
        self.now = now
        self.live = live
        self.definition = definition
        self.knownUndeclared = knownUndeclared
        self.pending = pending
        self.running = running
        self.runsInFlight = runsInFlight
        self.maxConcurrentRuns = maxConcurrentRuns
        self.conditions = conditions
        self.failureStreak = failureStreak
        self.recentRuns = recentRuns
        self.missedByDay = missedByDay
        self.recentEvents = recentEvents
        self.widget = widget
    }
}

extension SchedulerSnapshot.Pending {
    /// A pending request as the state file keeps it: no place (only a live core knows that).
    public init(_ p: PendingRequest) {
        self.init(identifier: p.identifier, namespace: p.namespace, kind: p.kind, earliest: p.earliest,
                  submitted: p.submitted, sequence: p.sequence, origin: p.origin,
                  requiresExternalPower: p.requiresExternalPower,
                  requiresNetworkConnectivity: p.requiresNetworkConnectivity, wake: nil, place: nil)
    }
}
