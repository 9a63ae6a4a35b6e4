import RefreshdCore

/// One line the control server writes: a reply to a request (`ok` true with the command's
/// result, or false with `error`), or, on a subscribed connection, a pushed `event`
/// (`observation` or `snapshot`).
///
/// One flat type with optional fields, so a client reads every line the same way. Fields are
/// the engine's shared Codable types: `SchedulerSnapshot`, `StatusReport`, `RuntimeObservation`.
package struct ControlReply: Codable, Sendable, Equatable {
    package var v: Int
    /// The request's `id`, if it had one; nil on pushed events.
    package var id: Int?
    package var ok: Bool
    package var error: ControlFailure?
    /// A pushed event: `observation` or `snapshot`; nil on replies.
    package var event: String?
    /// The server's clock when it wrote the line.
    package var now: Instant?
    package var hello: ControlHello?
    /// `pending`, and the pending request a `submit` made.
    package var pending: [SchedulerSnapshot.Pending]?
    package var snapshot: SchedulerSnapshot?
    package var status: StatusReport?
    package var why: WhyReport?
    /// `reload`, `status` and pushed snapshots: the widgets.
    package var timelines: TimelineSnapshot?
    /// `activity`, `status` and pushed snapshots: the live activities.
    package var activities: ActivitySnapshot?
    /// `stats`: the per-day widget reload counters.
    package var stats: ReloadStats?
    /// `run-stats`: runs by job and outcome over the last days.
    package var runStats: RunStats?
    package var observation: RuntimeObservation?
    /// `metrics`: the Prometheus text exposition.
    package var metrics: String?
    /// `instance-list`: a template's instances; `instance-add`: the instance added or kept.
    package var instances: [InstanceRecord]?
    /// `instance-list`: the key to give as `after` for the next page, when there is one.
    package var nextAfter: String?
    /// A one-line summary of what a command did (`cancelled app.feed`).
    package var message: String?
    /// Cluster mode (issue 24), `subscribe` and pushed snapshots: who leads each shard, read
    /// from the database at `cluster.databaseNow` (the snapshot beside it is every shard's).
    package var cluster: ClusterStatus?

    package init(id: Int?, ok: Bool = true, now: Instant? = nil) {
        v = ControlRequest.version
        self.id = id
        self.ok = ok
        self.now = now
    }

    /// An error reply.
    package static func failure(id: Int?, _ failure: ControlFailure) -> ControlReply {
        var reply = ControlReply(id: id, ok: false)
        reply.error = failure
        return reply
    }
}
