/// Everything an observer (the simulator, a test, `status`) needs to see of a `SchedulerCore`
/// between events, as a plain value: pending requests and where each one sits, runs in flight,
/// failure streaks, the armed wake-up and the core's counters.
///
/// Collections are in a fixed order (pending by earliest begin date then sequence, runs by run id,
/// streaks by identifier), so two snapshots of equal states are equal and encode to the same bytes
/// (with sorted keys). Instants encode as integers: milliseconds since the Unix epoch, UTC (see
/// `Codable+Core.swift`).
package struct SchedulerSnapshot: Codable, Equatable, Sendable {
    /// A pending request and where the core keeps it.
    package struct Pending: Codable, Equatable, Sendable {
        /// Where a pending request is held.
        package enum Place: String, Codable, Equatable, Sendable, CaseIterable {
            /// In the wake-up heap, launched when its wake-up comes.
            case queued
            /// Due, but its power or network condition does not hold (or has not been re-read).
            case waitingOnConditions
            /// Due, but a run of the same identifier is in flight; it goes back to the heap then.
            case blockedByRun
            /// Due, but the admission policy holds it back until `heldUntil`.
            case held
            /// Due, but it (or its template) is paused: it waits for the resume.
            case paused
        }

        package var identifier: String
        package var namespace: String
        package var kind: TaskKind
        package var earliest: Instant
        package var submitted: Instant
        package var sequence: UInt64
        package var origin: PendingRequest.Origin
        package var requiresExternalPower: Bool
        package var requiresNetworkConnectivity: Bool
        /// The wake-up the core keys it by: its earliest begin date plus the job's accuracy.
        /// Nil only when the request is held nowhere (a state `checkInvariants` reports).
        package var wake: Instant?
        /// Nil only when the request is held nowhere (a state `checkInvariants` reports).
        package var place: Place?
        /// When the admission policy looks at a `held` request again; nil in other places.
        package var heldUntil: Instant?

        package init(identifier: String, namespace: String, kind: TaskKind, earliest: Instant,
                    submitted: Instant, sequence: UInt64, origin: PendingRequest.Origin,
                    requiresExternalPower: Bool, requiresNetworkConnectivity: Bool,
                    wake: Instant?, place: Place?, heldUntil: Instant? = nil) {
            self.identifier = identifier
            self.namespace = namespace
            self.kind = kind
            self.earliest = earliest
            self.submitted = submitted
            self.sequence = sequence
            self.origin = origin
            self.requiresExternalPower = requiresExternalPower
            self.requiresNetworkConnectivity = requiresNetworkConnectivity
            self.wake = wake
            self.place = place
            self.heldUntil = heldUntil
        }
    }

    /// A run in flight.
    package struct Run: Codable, Equatable, Sendable {
        /// Where a run is in its life: `{"state": "running"}`,
        /// `{"state": "expiring", "killAt": 1800000005000}` or `{"state": "killed"}`.
        package enum Phase: Codable, Equatable, Sendable {
            case running
            /// Expiration delivered; killed at `killAt` if still running.
            case expiring(killAt: Instant)
            /// Kill sent; waiting for the shell to report the end.
            case killed

            private enum CodingKeys: String, CodingKey { case state, killAt }

            package init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                switch try container.decode(String.self, forKey: .state) {
                case "running": self = .running
                case "expiring": self = .expiring(killAt: try container.decode(Instant.self, forKey: .killAt))
                case "killed": self = .killed
                case let other:
                    throw DecodingError.dataCorruptedError(forKey: .state, in: container,
                                                           debugDescription: "unknown run phase \(other)")
                }
            }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                switch self {
                case .running:
                    try container.encode("running", forKey: .state)
                case let .expiring(killAt):
                    try container.encode("expiring", forKey: .state)
                    try container.encode(killAt, forKey: .killAt)
                case .killed:
                    try container.encode("killed", forKey: .state)
                }
            }
        }

        package var runID: Int64
        package var identifier: String
        package var kind: TaskKind
        package var started: Instant
        package var deadline: Instant
        package var attempt: Int
        package var phase: Phase
        /// The expiration came from a shutdown (the run ends `interrupted`, not `expired`).
        package var stoppedByShutdown: Bool

        package init(runID: Int64, identifier: String, kind: TaskKind, started: Instant, deadline: Instant,
                    attempt: Int, phase: Phase, stoppedByShutdown: Bool) {
            self.runID = runID
            self.identifier = identifier
            self.kind = kind
            self.started = started
            self.deadline = deadline
            self.attempt = attempt
            self.phase = phase
            self.stoppedByShutdown = stoppedByShutdown
        }
    }

    /// Consecutive failed attempts of a job (only non-zero streaks are kept).
    package struct FailureStreak: Codable, Equatable, Sendable {
        package var identifier: String
        package var count: Int

        package init(identifier: String, count: Int) {
            self.identifier = identifier
            self.count = count
        }
    }

    /// By earliest begin date, then sequence (due order).
    package var pending: [Pending]
    /// By run id.
    package var runs: [Run]
    /// By identifier.
    package var failureStreaks: [FailureStreak]
    /// The instant the single wake-up timer is armed for, if any.
    package var nextWakeUp: Instant?
    package var isStopping: Bool
    /// `.stopped` went out: shutdown is complete.
    package var stopped: Bool
    /// The last machine conditions the shell reported.
    package var conditions: Conditions
    /// Whether the core asked the shell to watch conditions.
    package var watchingConditions: Bool
    /// The run id the next launch gets.
    package var nextRunID: Int64
    /// The sequence the next pending request gets.
    package var nextSequence: UInt64
    /// Declared templates and how many instances each has (issue 23); nil when there are none,
    /// so snapshots without templates encode as before.
    package var templates: [Template]?
    /// Paused jobs, instances and templates, by identifier, and since when (issue 33); nil when
    /// nothing is paused, so snapshots encode as before.
    package var paused: [Paused]?

    /// An identifier an operator paused: nothing of it launches until it is resumed.
    package struct Paused: Codable, Equatable, Sendable {
        package var identifier: String
        package var since: Instant

        package init(identifier: String, since: Instant) {
            self.identifier = identifier
            self.since = since
        }
    }

    /// A declared template: its identifier, parameters and instance count.
    package struct Template: Codable, Equatable, Sendable {
        package var identifier: String
        package var parameters: [String]
        package var instances: Int
    }

    package init(pending: [Pending], runs: [Run], failureStreaks: [FailureStreak], nextWakeUp: Instant?,
                isStopping: Bool, stopped: Bool, conditions: Conditions, watchingConditions: Bool,
                nextRunID: Int64, nextSequence: UInt64) {
        self.pending = pending
        self.runs = runs
        self.failureStreaks = failureStreaks
        self.nextWakeUp = nextWakeUp
        self.isStopping = isStopping
        self.stopped = stopped
        self.conditions = conditions
        self.watchingConditions = watchingConditions
        self.nextRunID = nextRunID
        self.nextSequence = nextSequence
    }
}
