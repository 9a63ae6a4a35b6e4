
/// When a config reload reads the job directory, and what becomes of a read: pure (event in,
/// effects out), so its rules are tested as input -> exact effects and no host decides them.
///
/// - A reload requested while a read is under way is not started beside it: the latest such
///   request is kept and served when the read ends, so a burst of edits costs one more read,
///   not one each.
/// - A read still going `timeout` after it started is abandoned: the running config stays in
///   force, and the read's result is ignored when it comes (a slow disk or a hostile file never
///   changes the config late, and scheduling never waited for it).
/// - A request while an abandoned read is still running says so (it is postponed, not lost).
///
/// The host carries out the effects: it reads on a worker thread (`startRead`), arms and stops
/// one timer, applies a finished read (`apply`, through `RefreshRuntime.reload`/`refuseReload`)
/// and writes the log lines. Generations tell a late timer or read from the current one.
package struct ReloadMachine: Sendable, Hashable {
    package enum Event: Sendable, Hashable {
        /// A reload was asked for (SIGHUP, the directory changed...); `reason` goes in the logs.
        case requested(reason: String)
        /// The read of `generation` ended (its result is held by the host).
        case readFinished(generation: Int)
        /// The timer armed for `generation` fired; `jobsInForce` is the running config's size,
        /// for the log line.
        case timerFired(generation: Int, jobsInForce: Int)
    }

    package enum Effect: Sendable, Hashable {
        /// Read and validate the job directory off the loop; report `.readFinished(generation)`.
        case startRead(generation: Int)
        /// Arm the reload timer to fire `.timerFired(generation)` after `after`.
        case armTimer(after: Duration, generation: Int)
        case stopTimer
        /// Apply the read just finished (a valid config as a diff, an invalid one refused).
        case apply(reason: String)
        /// One error line for the log.
        case logError(String)
    }

    /// The job directory, named in the log lines.
    package let directory: String
    /// How long a read may take before it is abandoned.
    package let timeout: Duration
    /// A read of the job directory, started for `reason`; `abandoned` once it took too long.
    package struct Read: Sendable, Hashable {
        package var generation: Int
        package var reason: String
        package var abandoned = false

        package init(generation: Int, reason: String, abandoned: Bool = false) {
            self.generation = generation
            self.reason = reason
            self.abandoned = abandoned
        }
    }

    /// The read under way, if any.
    package private(set) var underway: Read?
    /// The latest request that came while a read was under way, served when it ends.
    package private(set) var requestedMeanwhile: String?
    package private(set) var generation = 0

    package init(directory: String, timeout: Duration) {
        self.directory = directory
        self.timeout = timeout
    }

    /// One event; its effects, to be carried out in order.
    package mutating func handle(_ event: Event) -> [Effect] {
        var effects: [Effect] = []
        handle(event, into: &effects)
        return effects
    }

    package mutating func handle(_ event: Event, into effects: inout [Effect]) {
        switch event {
        case let .requested(reason):
            request(reason, into: &effects)
        case let .timerFired(generation, count):
            guard let read = underway, read.generation == generation, !read.abandoned else { return }
            underway?.abandoned = true
            effects.append(.logError("reload abandoned (\(read.reason)): reading \(directory) took longer than \(timeout.compactText); keeping the running config of \(count) job\(count == 1 ? "" : "s")"))
        case let .readFinished(generation):
            guard let read = underway, read.generation == generation else { return }
            underway = nil
            effects.append(.stopTimer)
            if !read.abandoned { effects.append(.apply(reason: read.reason)) }
            if let again = requestedMeanwhile {
                requestedMeanwhile = nil
                request(again, into: &effects)
            }
        }
    }

    private mutating func request(_ reason: String, into effects: inout [Effect]) {
        if let read = underway {
            requestedMeanwhile = reason
            if read.abandoned {
                effects.append(.logError("reload postponed (\(reason)): an abandoned read of \(directory) is still running; trying again when it ends"))
            }
            return
        }
        generation += 1
        underway = Read(generation: generation, reason: reason)
        effects.append(.armTimer(after: timeout, generation: generation))
        effects.append(.startRead(generation: generation))
    }
}
