import RefreshdConfig

/// How a staging run ended, with its log lines and result lines.
package struct StageReport: Sendable, Hashable {
    package enum Outcome: String, Sendable, Hashable {
        /// A playlist for the day was written (or was already current).
        case staged
        case alreadyStaged
        /// The run's allowance ran out; the container is consistent and the next run continues.
        case expired
        /// The test hook stopped the run after a write step, as a kill would.
        case stopped
        case failed
    }

    package var outcome: Outcome
    package var date: CivilDate?
    /// Lines for the log: skipped assets and why, notes, the summary.
    package var log: [String]
    /// JSON object lines for the results channel (the reload request on success).
    package var results: [String]
    /// Write steps taken (files written count two: the temporary and the rename).
    package var steps: Int
    package var renditionsWritten: Int
    package var renditionsReused: Int

    package var succeeded: Bool { outcome == .staged || outcome == .alreadyStaged }
}
