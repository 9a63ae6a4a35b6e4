/// A broken rule of `SchedulerCore`'s state, found by `checkInvariants()`.
///
/// A correct core never produces one; the simulator and the tests check after every step.
package struct InvariantViolation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The rule that is broken. The raw values are stable ids, safe to match on and to store.
    package enum Invariant: String, Sendable, Hashable, Codable, CaseIterable {
        // Where pending requests are.
        /// A pending request is in none of the heap (as a live entry), `waitingOnConditions`,
        /// `blockedByRun`, `held` or `parked`: it would never launch.
        case pendingUnplaced = "pending-unplaced"
        /// A pending request is in more than one of those places (or twice in the heap).
        case pendingInSeveralPlaces = "pending-in-several-places"
        /// A `waitingOnConditions`, `blockedByRun` or `held` entry is stale (no pending request with its
        /// sequence) or is filed under another identifier than its slot's.
        case sideEntryStale = "side-entry-stale"
        /// An entry is held by the admission policy although its identifier has a run in flight
        /// (it should be blocked by the run).
        case heldMisfiled = "held-misfiled"
        /// An entry is blocked by a run, but no run of its identifier is in flight.
        case blockedWithoutRun = "blocked-without-run"
        /// An entry is parked as paused although neither its identifier nor its template is
        /// paused (it would wait for a resume that never comes), or while a run of it is in flight.
        case parkedMisfiled = "parked-misfiled"
        /// An entry waits on conditions although its identifier has a run in flight (it should be
        /// blocked by the run) or its request needs no condition.
        case waitingMisfiled = "waiting-misfiled"
        /// A live heap entry wakes before its request's earliest begin date.
        case wakeBeforeEarliest = "wake-before-earliest"
        /// A live entry's wake-up is not the one its request's record keeps (`PendingQueue.wake(at:)`,
        /// which the light snapshot reads instead of looking for the entry).
        case wakeUnrecorded = "wake-unrecorded"
        /// The queue's count or its per-(namespace, kind) counters disagree with its requests.
        case pendingCountMismatch = "pending-count-mismatch"
        /// More pending requests of a kind in a namespace than the configured limit.
        case pendingLimitExceeded = "pending-limit-exceeded"
        /// A pending request for an identifier that is not declared.
        case pendingUndeclared = "pending-undeclared"
        /// An app-refresh request that requires power or network (conditions are processing-only).
        case appRefreshWithConditions = "app-refresh-with-conditions"
        /// Two pending requests (or heap entries of different requests) share a sequence, or a
        /// sequence is not below `nextSequence`.
        case sequenceInvalid = "sequence-invalid"

        // Runs.
        /// `active` and `activeByIdentifier` disagree (either way), or a run is keyed by another id.
        case runIndexMismatch = "run-index-mismatch"
        /// A run id is not below `nextRunID`.
        case runIDNotBelowNext = "run-id-not-below-next"
        /// More runs in flight than `maxConcurrentRuns`.
        case tooManyRuns = "too-many-runs"
        /// A run's deadline is before its start, or its attempt is below 1.
        case runTimesInvalid = "run-times-invalid"
        /// A run expiring on its own (not by shutdown) is killed before its deadline.
        case killBeforeDeadline = "kill-before-deadline"
        /// A run is still `running` while the core is stopping (something launched after the
        /// shutdown, or the shutdown missed it), or is marked stopped-by-shutdown while not stopping.
        case runningWhileStopping = "running-while-stopping"
        /// `.stopped` went out while the core is not stopping or runs are still in flight.
        case stoppedTooEarly = "stopped-too-early"
        /// A failure streak that is not positive (a success removes the streak).
        case failureStreakNotPositive = "failure-streak-not-positive"

        // Timer and conditions.
        /// The armed wake-up is not the core's next deadline (between events).
        case armedWakeUpMismatch = "armed-wake-up-mismatch"
        /// Watching conditions is not exactly "something waits on conditions and not stopping".
        case conditionWatchMismatch = "condition-watch-mismatch"

        // After an event at `now` (checkInvariants(after:at:)).
        /// After a dispatch at `now` with capacity free and not stopping, the heap still holds a
        /// request the dispatch would launch: one whose wake-up has come, or a first entry whose
        /// earliest begin date has passed.
        case dueLeftInHeap = "due-left-in-heap"
        /// After a timer fired at `now`, a run is still running past its deadline or expiring
        /// past its kill instant.
        case overdueRunNotExpired = "overdue-run-not-expired"
        /// After a timer fired at `now`, a request is still held by the admission policy although
        /// the instant the policy named has come.
        case heldPastRelease = "held-past-release"
        /// After fresh conditions with capacity free, a request waits although they allow it.
        case waitingThoughAllowed = "waiting-though-allowed"
        /// After `runFinished`, the run is still in flight.
        case finishedRunStillActive = "finished-run-still-active"
    }

    package var invariant: Invariant
    /// The task identifier involved, if one is.
    package var identifier: String?
    /// The run involved, if one is.
    package var runID: Int64?
    /// One line saying what is wrong, with the values involved.
    package var detail: String

    package init(_ invariant: Invariant, identifier: String? = nil, runID: Int64? = nil, _ detail: String) {
        self.invariant = invariant
        self.identifier = identifier
        self.runID = runID
        self.detail = detail
    }

    /// `pending-unplaced [a.refresh]: ...` or `run-index-mismatch [run 7 a.refresh]: ...`.
    package var description: String {
        var subject: [String] = []
        if let runID { subject.append("run \(runID)") }
        if let identifier { subject.append(identifier) }
        let tag = subject.isEmpty ? "" : " [\(subject.joined(separator: " "))]"
        return "\(invariant.rawValue)\(tag): \(detail)"
    }
}
