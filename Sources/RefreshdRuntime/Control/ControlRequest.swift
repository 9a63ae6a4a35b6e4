import RefreshdCore

/// One request line of the control protocol (version 1), as JSON:
/// `{"v":1,"id":7,"command":"submit","identifier":"app.feed","earliest":"2026-11-23T04:00:00.000Z"}`.
///
/// `id` is the client's and comes back in the reply. `command` stays a string here so that an
/// unknown one is answered `unknown-command`, not `bad-request`. Instants are ISO 8601 UTC text
/// with milliseconds, as in every other JSON refreshd writes.
public struct ControlRequest: Codable, Sendable, Equatable {
    /// The protocol version the client speaks; this refreshd speaks `ControlRequest.version`.
    public var v: Int
    public var id: Int?
    public var command: String
    /// The job, for `submit`, `cancel`, `simulate-launch`, `simulate-expiration`, `why`.
    public var identifier: String?
    /// `submit`: the earliest begin date (default: now).
    public var earliest: Instant?
    /// `status`: how many recent runs (default 20).
    public var runs: Int?
    /// `reload`: the widget kind, or `all` true for every kind; `foreground` true makes it the
    /// exempt reload of an app in the foreground (not counted against the budget).
    public var kind: String?
    public var all: Bool?
    public var foreground: Bool?
    /// `activity`: one activity line as JSON text, in the results channel's vocabulary
    /// (`{"activity":"start","id":"pack","type":"Download","content":{"progress":0.1}}`; see
    /// `ResultLine`), plus an optional `"namespace"` for a start (default `default`).
    public var activity: String?
    /// `stats`: how many UTC days, ending today (default 7).
    public var days: Int?

    public static let version = 1

    public init(_ command: ControlCommandName, identifier: String? = nil, earliest: Instant? = nil,
                runs: Int? = nil, kind: String? = nil, all: Bool? = nil, foreground: Bool? = nil,
                activity: String? = nil, days: Int? = nil, id: Int? = nil) {
        v = Self.version
        self.id = id
        self.command = command.rawValue
        self.identifier = identifier
        self.earliest = earliest
        self.runs = runs
        self.kind = kind
        self.all = all
        self.foreground = foreground
        self.activity = activity
        self.days = days
    }
}
