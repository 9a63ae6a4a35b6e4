import RefreshdCore

/// One request line of the control protocol (version 1), as JSON:
/// `{"v":1,"id":7,"command":"submit","identifier":"app.feed","earliest":"2026-11-23T04:00:00.000Z"}`.
///
/// `id` is the client's and comes back in the reply. `command` stays a string here so that an
/// unknown one is answered `unknown-command`, not `bad-request`. Instants are ISO 8601 UTC text
/// with milliseconds, as in every other JSON refreshd writes.
package struct ControlRequest: Codable, Sendable, Equatable {
    /// The protocol version the client speaks; this refreshd speaks `ControlRequest.version`.
    package var v: Int
    package var id: Int?
    package var command: String
    /// The job, for `submit`, `cancel`, `simulate-launch`, `simulate-expiration`, `why`.
    package var identifier: String?
    /// `submit`: the earliest begin date (default: now).
    package var earliest: Instant?
    /// `status`: how many recent runs (default 20, at most `Bounds.runs`).
    package var runs: Int?
    /// `status`: page the runs: only runs with an id below this one (the previous page's last
    /// run id, given back as the report's `nextBefore`). Default: from the newest.
    package var before: Int64?
    /// `reload`: the widget kind, or `all` true for every kind; `foreground` true makes it the
    /// exempt reload of an app in the foreground (not counted against the budget).
    package var kind: String?
    package var all: Bool?
    package var foreground: Bool?
    /// `activity`: one activity line as JSON text, in the results channel's vocabulary
    /// (`{"activity":"start","id":"pack","type":"Download","content":{"progress":0.1}}`; see
    /// `ResultLine`), plus an optional `"namespace"` for a start (default `default`).
    package var activity: String?
    /// `stats`: how many UTC days, ending today (default 7, at most `Bounds.days`).
    package var days: Int?
    /// `instance-add`, `instance-remove`, `instance-list` (issue 23): the template's identifier,
    /// the instance's key, and (add) its parameter values by name.
    package var template: String?
    package var key: String?
    /// `instance-add` of many instances in one request (instead of `key`): committed in one
    /// transaction on one machine, and on a cluster node queued as one command a shard.
    package var keys: [String]?
    package var values: [String: String]?
    /// `instance-list`: a page of at most `limit` instances (default and most
    /// `Bounds.instances`) after the instance with key `after` (default: from the first).
    package var after: String?
    package var limit: Int?
    /// In cluster mode (issues 24, 32) every command that changes a shard's state is queued in
    /// the database for the shard's leader under this id (default: a new one): a retried request
    /// with the same id is applied once.
    package var commandID: String?

    package static let version = 1

    package init(_ command: ControlCommandName, identifier: String? = nil, earliest: Instant? = nil,
                runs: Int? = nil, kind: String? = nil, all: Bool? = nil, foreground: Bool? = nil,
                activity: String? = nil, days: Int? = nil, before: Int64? = nil, id: Int? = nil) {
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
        self.before = before
    }
}

extension ControlRequest {
    /// The accepted range of every number a request carries. A request outside them is refused
    /// (`bad-request`, naming the field and the range) before anything acts on it: a socket
    /// client must not be able to make refreshd compute with numbers nothing else produces.
    package enum Bounds {
        /// `runs`: recent runs in one status reply (a page; ask again with `before`).
        package static let runs = 0...1000
        /// `before`: a run id (run ids start at 1).
        package static let before: ClosedRange<Int64> = 1...Int64.max
        /// `limit`: instances in one `instance-list` reply (a page; ask again with `after`):
        /// 10,000 keep a reply under the socket's queued-bytes cap.
        package static let instances = 1...10_000
        /// `days`: UTC days of reload statistics (the CLI's `--days` range).
        package static let days = 1...3660
        /// `earliest`, relative to now: a year back (a date in the past means "now"; further
        /// back it is a mistake, and its lateness would be centuries), 100 years ahead (the
        /// longest duration `check` accepts).
        package static let earliestBack: Duration = .seconds(366 * 86_400)
        package static let earliestAhead: Duration = .seconds(100 * 366 * 86_400)
    }

    /// Refuses a request whose numbers are out of `Bounds` (pure: `now` is the server's clock).
    ///
    /// - Throws: `ControlFailure` `bad-request` naming the field, the value and the range.
    package func checkBounds(now: Instant) throws(ControlFailure) {
        func refuse(_ field: String, _ value: String, _ range: String) -> ControlFailure {
            ControlFailure(code: "bad-request", message: "\"\(field)\" is \(value); expected \(range)")
        }
        if let runs, !Bounds.runs.contains(runs) {
            throw refuse("runs", "\(runs)", "\(Bounds.runs.lowerBound) to \(Bounds.runs.upperBound) runs (page with \"before\")")
        }
        if let before, !Bounds.before.contains(before) {
            throw refuse("before", "\(before)", "a run id from 1")
        }
        if let limit, !Bounds.instances.contains(limit) {
            throw refuse("limit", "\(limit)", "\(Bounds.instances.lowerBound) to \(Bounds.instances.upperBound) instances (page with \"after\")")
        }
        if let keys, !Bounds.instances.contains(keys.count) {
            throw refuse("keys", "\(keys.count) keys", "\(Bounds.instances.lowerBound) to \(Bounds.instances.upperBound) keys (send more in several requests)")
        }
        if let days, !Bounds.days.contains(days) {
            throw refuse("days", "\(days)", "\(Bounds.days.lowerBound) to \(Bounds.days.upperBound) days")
        }
        if let earliest {
            let low = now - Bounds.earliestBack, high = now + Bounds.earliestAhead
            guard earliest >= low, earliest <= high else {
                throw refuse("earliest", "\(earliest)", "an instant from \(low) to \(high) (at most a year before now, 100 years after)")
            }
        }
    }
}
