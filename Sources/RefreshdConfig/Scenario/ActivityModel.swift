
/// A live activity a modelled job drives while it runs (`simulate: {activity: ...}`): a start
/// line when the run starts, an update every `updates` with its progress, an end line when the
/// run finishes. The lines are the real results vocabulary, delivered through the runtime while
/// the run goes on at their virtual instants, exactly as a real job writes them to fd 3.
package struct ActivityModel: Sendable, Hashable {
    /// How the job ends its activity when its run finishes.
    package enum End: Sendable, Hashable {
        case `default`
        case immediate
        /// Dismissed this long after the end (or at the 4 h cap, whichever is first).
        case after(Duration)
        /// The job never ends it: the system's limits do.
        case none
    }

    package var type: String
    /// The activity id; `{run}` is replaced by the run's number (one activity per run).
    package var id: String
    /// Time between updates; nil: never updated after the start.
    package var updates: Duration?
    /// Progress reported at the start and at the run's end, linear in between.
    package var progress: ClosedRange<Double>
    package var end: End
    /// Each start and update carries a stale date this long after it; nil: none.
    package var staleAfter: Duration?
    /// Updates sent with high priority (they count against the hourly budget).
    package var highPriority: Bool

    package init(type: String, id: String, updates: Duration? = nil, progress: ClosedRange<Double> = 0...1,
                end: End = .default, staleAfter: Duration? = nil, highPriority: Bool = false) {
        self.type = type
        self.id = id
        self.updates = updates
        self.progress = progress
        self.end = end
        self.staleAfter = staleAfter
        self.highPriority = highPriority
    }
}
