import RefreshdCore

/// What a scenario expects of its simulation; checked against the report at the end.
package enum Expectation: Sendable, Hashable {
    /// The number of a job's runs ending with `outcome` (nil: all runs) compares to `count`.
    case runs(job: String, outcome: Outcome?, Comparison, Int)
    /// At most `count` calendar slots of a job (nil: all jobs) were missed.
    case maxMissed(job: String?, Int)
    /// No run of the job started later than `limit` after its earliest begin date.
    case maxLateness(job: String, Duration)
    /// No invariant was violated (always checked; listed for clarity).
    case noViolation
    /// A widget figure (summed over the days, or on the 1-based `day`; over every family of the
    /// kind when `family` is nil) compares to `count`.
    case widget(kind: String, family: String?, day: Int?, WidgetFigure, Comparison, Int)
    /// The widget was first stale before this minute of the day (of `day`, or of the first day
    /// it was stale), or (nil) never stale.
    case widgetFirstStale(kind: String, family: String?, day: Int?, before: Int?)
    /// The activity reached `state` (with `cause`, when given), `after` its start compared to a
    /// duration when given; or, with `reached: false`, never reached it.
    case activity(id: String, state: String, cause: String?, after: (Comparison, Duration)?, reached: Bool)
    /// The activity's state at the end of the simulation (`dismissed` once it is gone).
    case activityFinal(id: String, state: String)
    /// A count of failure notifications over the simulation (issue 25) compares to `count`.
    case notifications(NotificationFigure, Comparison, Int)

    /// The notification counts an expectation can name (`SimulationReport.notifications`).
    package enum NotificationFigure: String, Sendable, Hashable, CaseIterable {
        case failure, recovery, delivered, retries
        case givenUp = "given-up", dropped, held
    }

    /// The figures of a widget's day an expectation can name.
    package enum WidgetFigure: String, Sendable, Hashable, CaseIterable {
        case reloadsRequested = "reloads-requested", reloadsPerformed = "reloads-performed"
        case reloadsDeferred = "reloads-deferred", reloadsExempt = "reloads-exempt"
        /// Counted reloads that waited for the minimum interval since the last one.
        case reloadsSpaced = "reloads-spaced"
        case providerCalls = "provider-calls", upstreamFetches = "upstream-fetches", staleMinutes = "stale-minutes"
        /// Minutes a playlist widget showed an earlier staged day's playlist (0 for other widgets).
        case fallbackMinutes = "fallback-minutes"
    }

    package static func == (a: Expectation, b: Expectation) -> Bool { a.key == b.key }
    package func hash(into hasher: inout Hasher) { hasher.combine(key) }
    /// A text that identifies the expectation (the tuple payload is not Hashable).
    var key: String { "\(self)" }

    package enum Comparison: String, Sendable, Hashable {
        case equal = "=="
        case atMost = "<="
        case atLeast = ">="

        package func holds(_ value: Int, _ bound: Int) -> Bool {
            switch self {
            case .equal: value == bound
            case .atMost: value <= bound
            case .atLeast: value >= bound
            }
        }
    }
}
