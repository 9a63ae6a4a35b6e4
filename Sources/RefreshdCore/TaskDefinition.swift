/// A declared task identifier and the rules its runs follow.
///
/// The analog of listing an identifier in `BGTaskSchedulerPermittedIdentifiers` and registering a
/// launch handler: requests for undeclared identifiers fail with `notPermitted`. Job files and the
/// embedding API both produce definitions.
public struct TaskDefinition: Sendable, Hashable {
    /// The name requests and runs carry (reverse-DNS by convention); unique among declarations.
    public var identifier: String
    /// Short app-refresh work or longer processing work: sets the default allowance and which
    /// pending limit applies.
    public var kind: TaskKind
    /// The "app" whose pending-request limits this identifier counts against.
    public var namespace: String
    /// How long a run may take before its expiration is delivered.
    public var allowance: Duration
    /// After the expiration, how long before the run is killed.
    public var grace: Duration
    /// How the next request is made when a run launches (none, an interval, a calendar).
    public var resubmit: ResubmitPolicy
    /// Whether and how a failed, expired, crashed or interrupted run is tried again (nil: never).
    public var retry: RetryPolicy?
    /// The next requests made by `resubmit` wait for external power (processing work).
    public var requiresExternalPower: Bool
    /// The next requests made by `resubmit` wait for a network with a default route.
    public var requiresNetworkConnectivity: Bool
    /// What to do with calendar slots missed during downtime, sleep or a clock step.
    public var missed: MissedPolicy
    /// With `missed: all`, slots older than this before now are not replayed.
    public var catchUp: Duration
    /// A seeded random delay in [0, jitter) added to each resubmitted request (RandomizedDelaySec).
    public var jitter: Duration
    /// Use one delay per job instead of one per slot.
    public var fixedJitter: Bool
    /// The run may start anywhere in [earliest, earliest + accuracy], so that requests due close
    /// together share one wake-up (AccuracySec). Zero: wake exactly at the earliest begin date.
    public var accuracy: Duration

    /// A definition with BGTaskScheduler's defaults: app refresh, the kind's allowance, 5 s grace, no
    /// resubmit and no retry. Register it with the scheduler before submitting requests for it.
    public init(
        identifier: String,
        kind: TaskKind = .appRefresh,
        namespace: String = "default",
        allowance: Duration? = nil,
        grace: Duration = .seconds(5),
        resubmit: ResubmitPolicy = .none,
        retry: RetryPolicy? = nil,
        requiresExternalPower: Bool = false,
        requiresNetworkConnectivity: Bool = false,
        missed: MissedPolicy = .once,
        catchUp: Duration = .seconds(86_400),
        jitter: Duration = .zero,
        fixedJitter: Bool = false,
        accuracy: Duration = .zero
    ) {
        self.identifier = identifier
        self.kind = kind
        self.namespace = namespace
        self.allowance = allowance ?? kind.defaultAllowance
        self.grace = grace
        self.resubmit = resubmit
        self.retry = retry
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.missed = missed
        self.catchUp = catchUp
        self.jitter = jitter
        self.fixedJitter = fixedJitter
        self.accuracy = accuracy
    }

    /// The schedule new requests follow, if the job is on a calendar.
    public var schedule: Schedule? {
        if case let .calendar(s) = resubmit { s } else { nil }
    }
}
