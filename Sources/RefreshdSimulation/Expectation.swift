import RefreshdCore

/// What a scenario expects of its simulation; checked against the report at the end.
public enum Expectation: Sendable, Hashable {
    /// The number of a job's runs ending with `outcome` (nil: all runs) compares to `count`.
    case runs(job: String, outcome: Outcome?, Comparison, Int)
    /// At most `count` calendar slots of a job (nil: all jobs) were missed.
    case maxMissed(job: String?, Int)
    /// No run of the job started later than `limit` after its earliest begin date.
    case maxLateness(job: String, Duration)
    /// No invariant was violated (always checked; listed for clarity).
    case noViolation

    public enum Comparison: String, Sendable, Hashable {
        case equal = "=="
        case atMost = "<="
        case atLeast = ">="

        public func holds(_ value: Int, _ bound: Int) -> Bool {
            switch self {
            case .equal: value == bound
            case .atMost: value <= bound
            case .atLeast: value >= bound
            }
        }
    }
}
