/// One Live Activity: what was requested, what it shows now, where it is in its life and the
/// instants its deadlines derive from.
///
/// It is also the durable record (`ActivityChange.save`) and what the runtime publishes to the
/// shared container, so it is Codable and holds everything a restart needs: deadlines are never
/// stored, they follow from these instants and the settings (`ActivityMachine.nextDeadline`).
package struct Activity: Sendable, Hashable, Codable, Identifiable {
    /// Unique among the machine's activities (a dismissed activity's id may be reused).
    package var id: String
    /// The attributes type, as ActivityKit's `ActivityAttributes` type name (`WallpaperPack`).
    package var typeName: String
    /// The job that requested it, if a job did; its failure ends the activity.
    package var owner: String?
    /// The concurrency limit counts per namespace (an app, or a job's namespace).
    package var namespace: String
    /// Static attributes, JSON object text, fixed at the request.
    package var attributes: String
    /// The content state shown now, JSON object text.
    package var content: String
    /// Past this instant with no newer update the activity is stale.
    package var staleDate: Instant?
    /// The relevance score (orders activities on screen); not interpreted here.
    package var relevance: Double?
    /// Requested with frequent updates (a larger high-priority budget).
    package var frequentUpdates: Bool

    package var state: ActivityState
    /// The instant the current state began (as it should have, for deadlines applied late).
    package var stateSince: Instant
    /// When the request was accepted.
    package var requested: Instant
    /// When it starts (pending) or started: the 8 h and 12 h limits count from here.
    package var start: Instant
    /// The timestamp of the last update applied (nil before the first); older ones are ignored.
    package var lastUpdateTimestamp: Instant?
    /// When it ended (nil until then), and by what.
    package var ended: Instant?
    package var endCause: ActivityCause?
    /// The policy it ended with.
    package var dismissalPolicy: DismissalPolicy?
    /// The instant its policy dismisses it (before the 12 h cap); nil until it ends.
    package var dismissalByPolicy: Instant?
    /// Arrival instants of the high-priority updates applied in the last hour, oldest first.
    package var highPriorityUses: [Instant]
    /// A high-priority update held back by the budget, if any (the latest one wins).
    package var held: HeldActivityUpdate?
    /// Updates applied, and updates ignored (out of order, superseded, or too late).
    package var updatesApplied: Int
    package var updatesIgnored: Int

    package init(id: String, typeName: String, owner: String?, namespace: String,
                attributes: String, content: String, staleDate: Instant?, relevance: Double?,
                frequentUpdates: Bool, state: ActivityState, stateSince: Instant,
                requested: Instant, start: Instant, lastUpdateTimestamp: Instant? = nil,
                ended: Instant? = nil, endCause: ActivityCause? = nil,
                dismissalPolicy: DismissalPolicy? = nil, dismissalByPolicy: Instant? = nil,
                highPriorityUses: [Instant] = [], held: HeldActivityUpdate? = nil,
                updatesApplied: Int = 0, updatesIgnored: Int = 0) {
        self.id = id
        self.typeName = typeName
        self.owner = owner
        self.namespace = namespace
        self.attributes = attributes
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.frequentUpdates = frequentUpdates
        self.state = state
        self.stateSince = stateSince
        self.requested = requested
        self.start = start
        self.lastUpdateTimestamp = lastUpdateTimestamp
        self.ended = ended
        self.endCause = endCause
        self.dismissalPolicy = dismissalPolicy
        self.dismissalByPolicy = dismissalByPolicy
        self.highPriorityUses = highPriorityUses
        self.held = held
        self.updatesApplied = updatesApplied
        self.updatesIgnored = updatesIgnored
    }

    /// UTF-8 bytes of attributes and content together (the 4 KB rule).
    package var payloadBytes: Int { attributes.utf8.count + content.utf8.count }

    /// The instant it leaves the screen once ended: its policy's instant, capped by the visible
    /// limit after start. Nil while it has not ended.
    package func dismissal(visibleLimit: Duration) -> Instant? {
        dismissalByPolicy.map { min($0, start + visibleLimit) }
    }
}
