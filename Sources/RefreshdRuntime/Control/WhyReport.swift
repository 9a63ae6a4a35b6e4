/// The answer to `refreshd why ID`: one paragraph for people, and what the identifier names and
/// the holding reasons as stable codes for programs (`refreshd why --json`).
package struct WhyReport: Codable, Sendable, Equatable {
    /// What the identifier names (`WhySubject` without its details).
    package enum Subject: String, Codable, Sendable, CaseIterable {
        case job, timeline, provider, activity, unknown
    }

    /// What holds a job (or why it has nothing pending).
    package enum Reason: String, Codable, Sendable, CaseIterable {
        case notDeclared = "not-declared"
        case running
        case notPending = "not-pending"
        case retriesExhausted = "retries-exhausted"
        case earliestBegin = "earliest-begin"
        case backoff
        /// Its request runs again an attempt that refreshd's stop or death interrupted.
        case interrupted
        case calendarSlot = "calendar-slot"
        case blockedByRun = "blocked-by-run"
        case concurrencyCap = "concurrency-cap"
        case conditions
        case admissionHold = "admission-hold"
        /// An operator paused it, or its template (issue 33): nothing launches until resumed.
        case paused
        case missedSlots = "missed-slots"
        case refreshdDown = "refreshd-down"
        case due
        /// A widget provider: it runs only when its widget reloads.
        case widgetProvider = "widget-provider"
        /// A widget provider's call is in flight.
        case providerInFlight = "provider-in-flight"
        /// A widget's reload waits for its budget.
        case widgetBudget = "widget-budget"
        /// A widget's reload waits for the minimum interval since its last one.
        case widgetSpacing = "widget-spacing"
        /// A widget's counted reload waits for Low Power Mode to end.
        case widgetLowPower = "widget-low-power"
        /// A timeline job: it runs only as its families' providers, when their widgets reload.
        case timelineJob = "timeline-job"
        /// A live activity (the one named, or one the job owns).
        case activity
    }

    package var identifier: String
    package var subject: Subject
    /// Answered by the running refreshd (false: read from the state files).
    package var live: Bool
    package var reasons: [Reason]
    package var paragraph: String

    package init(identifier: String, subject: Subject = .job, live: Bool, reasons: [Reason], paragraph: String) {
        self.identifier = identifier
        self.subject = subject
        self.live = live
        self.reasons = reasons
        self.paragraph = paragraph
    }
}
