import RefreshdCore

/// One line the control server writes: a reply to a request (`ok` true with the command's
/// result, or false with `error`), or, on a subscribed connection, a pushed `event`
/// (`observation` or `snapshot`).
///
/// One flat type with optional fields, so a client reads every line the same way. Fields are
/// the engine's shared Codable types: `SchedulerSnapshot`, `StatusReport`, `RuntimeObservation`.
public struct ControlReply: Codable, Sendable, Equatable {
    public var v: Int
    /// The request's `id`, if it had one; nil on pushed events.
    public var id: Int?
    public var ok: Bool
    public var error: ControlFailure?
    /// A pushed event: `observation` or `snapshot`; nil on replies.
    public var event: String?
    /// The server's clock when it wrote the line.
    public var now: Instant?
    public var hello: ControlHello?
    /// `pending`, and the pending request a `submit` made.
    public var pending: [SchedulerSnapshot.Pending]?
    public var snapshot: SchedulerSnapshot?
    public var status: StatusReport?
    public var why: WhyReport?
    /// `reload`, `status` and pushed snapshots: the widgets.
    public var timelines: TimelineSnapshot?
    /// `activity`, `status` and pushed snapshots: the live activities.
    public var activities: ActivitySnapshot?
    /// `stats`: the per-day widget reload counters.
    public var stats: ReloadStats?
    public var observation: RuntimeObservation?
    /// `metrics`: the Prometheus text exposition.
    public var metrics: String?
    /// `instance-list`: a template's instances; `instance-add`: the instance added or kept.
    public var instances: [InstanceRecord]?
    /// `instance-list`: the key to give as `after` for the next page, when there is one.
    public var nextAfter: String?
    /// A one-line summary of what a command did (`cancelled app.feed`).
    public var message: String?

    public init(id: Int?, ok: Bool = true, now: Instant? = nil) {
        v = ControlRequest.version
        self.id = id
        self.ok = ok
        self.now = now
    }

    /// An error reply.
    public static func failure(id: Int?, _ failure: ControlFailure) -> ControlReply {
        var reply = ControlReply(id: id, ok: false)
        reply.error = failure
        return reply
    }
}
