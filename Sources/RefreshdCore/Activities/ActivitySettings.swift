/// The rules Live Activities follow, from the daemon's configuration (reloadable).
///
/// The defaults are ActivityKit's published limits (8 h active, 12 h visible, 4 h after ending,
/// 4 KB of attributes and content) and its unpublished ones as observed: about 5 concurrent
/// activities per app. Apple does not publish the size of the high-priority update budget; 10 an
/// hour (60 with frequent updates) is our choice: small enough that a job pushing every few
/// seconds is visibly throttled in simulation, large enough that a progress bar updated every
/// six minutes never is.
package struct ActivitySettings: Sendable, Hashable {
    /// Off: every new request is refused (`ActivityError.disabled`); activities already
    /// requested go on.
    package var enabled: Bool
    /// Pending, active and stale activities allowed at once per namespace.
    package var maxConcurrentPerNamespace: Int
    /// Activities held at once across every namespace: pending, active, stale and ended (not
    /// yet dismissed). Ended ones count too, since each stays for hours.
    package var maxActivitiesTotal: Int
    /// Namespaces with a live (pending, active or stale) activity at once: a client that makes
    /// up a namespace per request cannot multiply the per-namespace limit.
    package var maxNamespaces: Int
    /// High-priority updates applied per activity in any rolling hour.
    package var highPriorityBudgetPerHour: Int
    /// The same for an activity requested with `frequentUpdates`.
    package var frequentUpdatesBudgetPerHour: Int
    /// The most UTF-8 bytes of attributes plus content together.
    package var payloadLimitBytes: Int
    /// How long an ended activity stays visible under the default policy (and at most under
    /// `after`).
    package var dismissalDelay: Duration
    /// How long an activity may stay active or stale after it started before the system ends it.
    package var activeLimit: Duration
    /// How long an activity may stay visible after it started, whatever its policy.
    package var visibleLimit: Duration

    package init(enabled: Bool = true,
                maxConcurrentPerNamespace: Int = 5,
                maxActivitiesTotal: Int = 128,
                maxNamespaces: Int = 32,
                highPriorityBudgetPerHour: Int = 10,
                frequentUpdatesBudgetPerHour: Int = 60,
                payloadLimitBytes: Int = 4096,
                dismissalDelay: Duration = .seconds(4 * 3600),
                activeLimit: Duration = .seconds(8 * 3600),
                visibleLimit: Duration = .seconds(12 * 3600)) {
        self.enabled = enabled
        self.maxConcurrentPerNamespace = maxConcurrentPerNamespace
        self.maxActivitiesTotal = maxActivitiesTotal
        self.maxNamespaces = maxNamespaces
        self.highPriorityBudgetPerHour = highPriorityBudgetPerHour
        self.frequentUpdatesBudgetPerHour = frequentUpdatesBudgetPerHour
        self.payloadLimitBytes = payloadLimitBytes
        self.dismissalDelay = dismissalDelay
        self.activeLimit = activeLimit
        self.visibleLimit = visibleLimit
    }

    /// The budget of an activity, by whether it was requested with frequent updates (at least 1).
    package func budget(frequentUpdates: Bool) -> Int {
        max(1, frequentUpdates ? frequentUpdatesBudgetPerHour : highPriorityBudgetPerHour)
    }

    /// The window high-priority updates are counted over.
    package static let budgetWindow: Duration = .seconds(3600)
}
