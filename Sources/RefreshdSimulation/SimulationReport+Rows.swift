import RefreshdCore
import RefreshdRuntime

extension SimulationReport {
    /// The job rows as `build` counts them, per job by index (one hash per run, not one per
    /// figure): its totals, runs, lateness, and per day its figures and lateness (nil: nothing
    /// that day). An instance counts in its template's row (issue 23: one row per template, not
    /// 10,000), and by itself only for the template's instance count and failing top-N.
    struct Rows {
        let named: Set<String>
        var days: [Day]
        var indexOf: [String: Int] = [:]
        var identifiers: [String] = []
        var jobFigures: [Figures] = []
        var jobRuns: [[Run]] = []
        var jobLateness: [[Int64]] = []
        var dayJobs: [[Figures?]]
        var dayJobLateness: [[[Int64]]]
        var instanceFailures: [String: [String: Int]] = [:]
        var dayLateness: [[Int64]]
        var total = Figures()
        var totalLateness: [Int64] = []

        /// A row for each job the scenario names, in its order, and the days labelled `dayLabels`.
        init(_ sim: Simulation, dayLabels: [String]) {
            days = dayLabels.map { Day(date: $0, total: Figures(), jobs: [:]) }
            dayJobs = [[Figures?]](repeating: [], count: days.count)
            dayJobLateness = [[[Int64]]](repeating: [], count: days.count)
            dayLateness = [[Int64]](repeating: [], count: days.count)
            named = Set(sim.scenario.jobs.map(\.spec.identifier))
            for job in sim.scenario.jobs { _ = index(of: job.spec.identifier) }
        }

        mutating func index(of id: String) -> Int {
            if let i = indexOf[id] { return i }
            indexOf[id] = identifiers.count
            identifiers.append(id)
            jobFigures.append(Figures())
            jobRuns.append([])
            jobLateness.append([])
            for d in days.indices {
                dayJobs[d].append(nil)
                dayJobLateness[d].append([])
            }
            return identifiers.count - 1
        }

        /// An instance `T[K]`, or its widget's provider `T[K]#family` (a timeline template's
        /// instance runs only those): its template and the instance.
        static func instance(of id: String) -> (template: String, instance: String)? {
            if let split = InstanceName.split(id) { return (split.template, id) }
            guard let hash = id.utf8.lastIndex(of: UInt8(ascii: "#")), let split = InstanceName.split(String(id[..<hash])) else { return nil }
            return (split.template, String(id[..<hash]))
        }

        mutating func row(of id: String) -> Int {
            if let i = indexOf[id] { return i }
            if let split = Self.instance(of: id), named.contains(split.template) {
                let i = index(of: split.template)
                indexOf[id] = i
                instanceFailures[split.template, default: [:]][split.instance, default: 0] += 0
                return i
            }
            return index(of: id)
        }

        /// A job has a totals row if the scenario names it or it ran.
        func hasTotals(_ j: Int) -> Bool { named.contains(identifiers[j]) || jobFigures[j].launched > 0 }

        /// Each run started before `end`, counted in its day's row, its job's and the total.
        mutating func count(_ history: (entries: [RunHistory.Entry], identifiers: [String]), before end: Instant,
                            keepingRuns: Bool, dayIndex: (Instant) -> Int) {
            totalLateness.reserveCapacity(history.entries.count)
            // A history job number to its row here, given in the order jobs first ran (as by name).
            var rowOf = [Int?](repeating: nil, count: history.identifiers.count)
            for entry in history.entries where entry.run.started < end {
                let r = entry.run
                let d = dayIndex(r.started)
                let j = rowOf[Int(entry.job)] ?? row(of: history.identifiers[Int(entry.job)])
                rowOf[Int(entry.job)] = j
                if !instanceFailures.isEmpty, identifiers[j] != history.identifiers[Int(entry.job)],
                   r.outcome == .failure || r.outcome == .crashed || r.outcome == .expired {
                    let id = history.identifiers[Int(entry.job)]
                    instanceFailures[identifiers[j], default: [:]][Self.instance(of: id)?.instance ?? id, default: 0] += 1
                }
                let late = max(0, r.started.milliseconds - r.earliest.milliseconds)
                days[d].total.launched += 1
                days[d].total.count(r.outcome)
                var figures = dayJobs[d][j] ?? Figures()
                figures.launched += 1
                figures.count(r.outcome)
                dayJobs[d][j] = figures
                dayJobLateness[d][j].append(late)
                dayLateness[d].append(late)
                jobFigures[j].launched += 1
                jobFigures[j].count(r.outcome)
                if keepingRuns {
                    jobRuns[j].append(r)
                }
                jobLateness[j].append(late)
                total.launched += 1
                total.count(r.outcome)
                totalLateness.append(late)
            }
        }

        /// The missed slots the journal observed, counted in their day's row, their job's and
        /// the total.
        mutating func countMissed(_ observations: [RuntimeObservation], dayIndex: (Instant) -> Int) -> [Missed] {
            var missed: [Missed] = []
            for o in observations where o.kind == .missed {
                guard let id = o.identifier, let count = o.count else { continue }
                missed.append(Missed(identifier: id, noticed: o.time, count: count))
                let d = dayIndex(o.time)
                days[d].total.missed += count
                // A job without a totals row still counts in its day's row.
                let j = row(of: id)
                var figures = dayJobs[d][j] ?? Figures()
                figures.missed += count
                dayJobs[d][j] = figures
                if hasTotals(j) { jobFigures[j].missed += count }
                total.missed += count
            }
            return missed
        }

        /// The lateness figures filled in, each day's rows by identifier, and each job's totals
        /// (a template's with its instance count and most failing instances).
        mutating func finish(keepingRuns: Bool) -> [String: JobTotals] {
            func fill(_ f: inout Figures, _ values: [Int64]) { Figures.fillLateness(&f, values) }
            for d in days.indices {
                fill(&days[d].total, dayLateness[d])
                for j in identifiers.indices {
                    guard var figures = dayJobs[d][j] else { continue }
                    fill(&figures, dayJobLateness[d][j])
                    days[d].jobs[identifiers[j]] = figures
                }
            }
            var jobs: [String: JobTotals] = [:]
            for j in identifiers.indices {
                guard hasTotals(j) else { continue }
                var figures = jobFigures[j]
                fill(&figures, jobLateness[j])
                var totals = JobTotals(identifier: identifiers[j], figures: figures, runs: jobRuns[j])
                if let perInstance = instanceFailures[identifiers[j]] {
                    totals.instances = perInstance.count
                    totals.failingInstances = perInstance.filter { $0.value > 0 }
                        .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                        .prefix(SimulationReport.topFailing).map { InstanceFailures(identifier: $0.key, failures: $0.value) }
                    if keepingRuns { totals.runs.sort { $0.started != $1.started ? $0.started < $1.started : $0.runID < $1.runID } }
                }
                jobs[identifiers[j]] = totals
            }
            fill(&total, totalLateness)
            return jobs
        }
    }
}
