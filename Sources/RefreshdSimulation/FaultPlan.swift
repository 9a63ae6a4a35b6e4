import RefreshdConfig
import RefreshdCore

/// Random fault plans for exploration: a seed picks a handful of faults at random instants
/// (and random runs of random jobs), as deterministic-simulation testing of databases does. The
/// same seed always gives the same plan, so a failure is reproduced by its seed alone.
package enum FaultPlan {
    /// Between one and `maximum` faults spread over `days` days from the start.
    ///
    /// With `widgetJobs` (timeline jobs) the plan may also garble or expire a provider run,
    /// empty every reload budget for a span, tap a widget's button in a burst (intents), or put
    /// the device in Low Power Mode for a span; with `activityJobs` (jobs whose model drives a live
    /// activity) a run may fall silent. Without them a seed draws the plan it always drew.
    package static func random(seed: UInt64, days: Int, jobs: [String], widgetJobs: [String] = [],
                              activityJobs: [String] = [], maximum: Int = 5) -> [Fault] {
        let random = SeededRandom(seed: seed)
        let span = Int64(max(1, days)) * 86_400_000
        let count = 1 + Int(random.bits("plan", "count") % UInt64(max(1, maximum)))
        var faults: [Fault] = []
        for i in 0..<count {
            let n = Int64(i)
            let at = SimulationTime.afterStart(.milliseconds(Int64(random.unit("plan.at", "", n) * Double(span))))
            func length(_ maxMinutes: Int64) -> Duration {
                .seconds(60 + Int64(random.unit("plan.length", "", n) * Double(maxMinutes * 60)))
            }
            let job = jobs.isEmpty ? "" : jobs[Int(random.bits("plan.job", "", n) % UInt64(jobs.count))]
            let run = 1 + Int(random.bits("plan.run", "", n) % 20)
            let kinds = 9 + (widgetJobs.isEmpty ? 0 : 5) + (activityJobs.isEmpty ? 0 : 1)
            var kind = Int(random.bits("plan.kind", "", n) % UInt64(kinds))
            if kind >= 9, widgetJobs.isEmpty { kind += 5 }  // no widget kinds: straight to the activity one
            let widget = widgetJobs.isEmpty ? "" : widgetJobs[Int(random.bits("plan.widget", "", n) % UInt64(widgetJobs.count))]
            let provider = 1 + Int(random.bits("plan.provider", "", n) % 12)
            switch kind {
            case 0: faults.append(.down(TimeSpan(start: at, duration: length(12 * 60))))
            case 1: faults.append(.kill(at: at, restartAfter: length(30)))
            case 2: faults.append(jobs.isEmpty ? .kill(at: at, restartAfter: .seconds(5)) : .expireRun(job: job, run: run))
            case 3: faults.append(jobs.isEmpty ? .kill(at: at, restartAfter: .seconds(5)) : .crashRun(job: job, run: run))
            case 4:
                let minutes = Int64(random.bits("plan.step", "", n) % 240) - 120
                faults.append(.clockStep(at: at, by: .seconds(minutes == 0 ? 60 : minutes * 60)))
            case 5: faults.append(.suspend(TimeSpan(start: at, duration: length(10 * 60))))
            case 6: faults.append(.storeFull(TimeSpan(start: at, duration: length(60))))
            case 7: faults.append(.powerLoss(TimeSpan(start: at, duration: length(6 * 60))))
            case 8: faults.append(.networkLoss(TimeSpan(start: at, duration: length(6 * 60))))
            case 9: faults.append(.providerGarbage(job: widget, run: provider, span: nil))
            case 10: faults.append(.providerExpires(job: widget, run: provider))
            case 11: faults.append(.budgetEmpty(TimeSpan(start: at, duration: length(6 * 60))))
            case 13: faults.append(.lowPower(TimeSpan(start: at, duration: length(8 * 60))))
            case 12: faults.append(.widgetIntents(at: at, count: 1 + Int(random.bits("plan.taps", "", n) % 30)))
            default:
                let owner = activityJobs[Int(random.bits("plan.activity", "", n) % UInt64(activityJobs.count))]
                let after = Duration.milliseconds(Int64(random.unit("plan.silent", "", n) * 10 * 60_000))
                faults.append(.activitySilent(job: owner, run: run, after: after))
            }
        }
        return faults
    }

    /// One line per fault, for the start of an exploration's output.
    package static func describe(_ faults: [Fault], start: Instant) -> String {
        faults.map { fault in
            switch fault {
            case let .down(span): "down at \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
            case let .kill(at, restart): "kill -9 at \(at.instant(start: start)), restart after \(formatDuration(restart))"
            case let .expireRun(job, run): "\(job) run \(run) expires"
            case let .crashRun(job, run): "\(job) run \(run) crashes"
            case let .clockStep(at, by): "clock step \(formatDuration(by)) at \(at.instant(start: start))"
            case let .suspend(span, atWakeUp):
                "suspend at \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
                    + (atWakeUp ? ", seen at the next wake-up" : "")
            case let .storeFull(span): "disk full at \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
            case let .powerLoss(span): "power lost at \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
            case let .networkLoss(span): "network lost at \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
            default: fault.detail(start: start)
            }
        }.joined(separator: "; ")
    }
}
