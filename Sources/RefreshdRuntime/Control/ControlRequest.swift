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

    public static let version = 1

    public init(_ command: ControlCommandName, identifier: String? = nil, earliest: Instant? = nil,
                runs: Int? = nil, id: Int? = nil) {
        v = Self.version
        self.id = id
        self.command = command.rawValue
        self.identifier = identifier
        self.earliest = earliest
        self.runs = runs
    }
}
