import Foundation
import RefreshdCore

extension SimulationReport {
    /// The report as `refreshd simulate --json` prints it: pretty-printed, keys sorted, byte for
    /// byte what `JSONEncoder` with `[.prettyPrinted, .sortedKeys]` writes, and a newline.
    package func prettyJSON() throws -> Data {
        var data = Data()
        try writePrettyJSON { data.append(contentsOf: $0) }
        return data
    }

    /// Hands `prettyJSON()`'s bytes to `write` in pieces of about `chunk` bytes, in order, never
    /// holding the whole text.
    ///
    /// A year of a per-minute job is half a million runs, 125 MB of JSON; a year of `Jobs/` has
    /// thousands of widget rows, marks and activity steps besides. `JSONEncoder` builds a tree of
    /// every value, boxed, before it writes a byte: the runs through it cost a third of the
    /// simulation and doubled its peak memory, the rest of the report 6% of a year of `Jobs/`
    /// and 50 MB. So every value is written here by hand, field by field in the order of the
    /// keys (`PrettyJSONWriter`). `SimulationReportWriterTests` compares the bytes with
    /// `JSONEncoder`'s for a report with every field filled: a field added to a type and not
    /// here fails it.
    package func writePrettyJSON(chunk: Int = 1 << 20, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withoutActuallyEscaping(write) { write in
            var w = PrettyJSONWriter(chunk: chunk, sink: write)
            try w.report(self)
            w.newline()
            try w.finish()
        }
    }
}

/// Each type of the report, its members in the order of their keys' UTF-8 bytes, as the
/// synthesized `Codable` (or the type's own `encode(to:)`) names them: a nil the synthesized
/// encoding leaves out is left out, one a custom `encode(to:)` writes is `null`.
extension PrettyJSONWriter {
    typealias Report = SimulationReport

    mutating func report(_ r: Report) throws {
        try object { w in
            w.key("activityLanes")
            try w.array(r.activityLanes) { try $0.activityLane($1) }
            w.key("days")
            try w.array(r.days) { try $0.day($1) }
            w.key("downtime")
            try w.array(r.downtime) { try $0.fault($1) }
            w.key("end")
            w.instant(r.end)
            w.key("expectations")
            try w.array(r.expectations) { try $0.expectation($1) }
            w.key("faults")
            try w.array(r.faults) { try $0.fault($1) }
            w.key("jobs")
            try w.array(r.jobs) { try $0.job($1) }
            w.key("missed")
            try w.array(r.missed) { try $0.missed($1) }
            if let n = r.notifications {
                w.key("notifications")
                try w.notifications(n)
            }
            w.key("scenario")
            w.string(r.scenario)
            w.key("seed")
            w.number(r.seed)
            w.key("start")
            w.instant(r.start)
            w.key("steps")
            w.number(r.steps)
            w.key("timeZone")
            w.string(r.timeZone)
            w.key("total")
            try w.figures(r.total)
            w.key("violations")
            try w.array(r.violations) { try $0.violation($1) }
            w.key("widgetLanes")
            try w.array(r.widgetLanes) { try $0.widgetLane($1) }
        }
    }

    mutating func figures(_ f: Report.Figures) throws {
        try object { w in
            w.key("crashed"); w.number(f.crashed)
            w.key("expired"); w.number(f.expired)
            w.key("failure"); w.number(f.failure)
            w.key("interrupted"); w.number(f.interrupted)
            w.key("latenessMax"); w.number(f.latenessMax)
            w.key("latenessP50"); w.number(f.latenessP50)
            w.key("launched"); w.number(f.launched)
            w.key("missed"); w.number(f.missed)
            w.key("success"); w.number(f.success)
        }
    }

    mutating func day(_ d: Report.Day) throws {
        try object { w in
            w.key("activities")
            try w.array(d.activities) { try $0.activityDay($1) }
            w.key("date")
            w.string(d.date)
            w.key("jobs")
            try w.object(sorting: d.jobs) { try $0.figures($1) }
            w.key("total")
            try w.figures(d.total)
            w.key("widgets")
            try w.array(d.widgets) { try $0.widgetDay($1) }
        }
    }

    mutating func job(_ j: Report.JobTotals) throws {
        try object { w in
            if let failing = j.failingInstances {
                w.key("failingInstances")
                try w.array(failing) { w, f in
                    try w.object { w in
                        w.key("failures"); w.number(f.failures)
                        w.key("identifier"); w.string(f.identifier)
                    }
                }
            }
            w.key("figures")
            try w.figures(j.figures)
            w.key("identifier")
            w.string(j.identifier)
            if let instances = j.instances {
                w.key("instances")
                w.number(instances)
            }
            w.key("runs")
            try w.array(j.runs) { try $0.run($1) }
        }
    }

    mutating func run(_ run: Report.Run) throws {
        try object { w in
            w.key("earliest"); w.instant(run.earliest)
            if let ended = run.ended { w.key("ended"); w.instant(ended) }
            if let outcome = run.outcome { w.key("outcome"); w.string(outcome.rawValue) }
            w.key("runID"); w.number(run.runID)
            w.key("started"); w.instant(run.started)
        }
    }

    mutating func fault(_ f: Report.FaultRecord) throws {
        try object { w in
            if let at = f.at { w.key("at"); w.instant(at) }
            w.key("detail"); w.string(f.detail)
            w.key("kind"); w.string(f.kind)
            if let until = f.until { w.key("until"); w.instant(until) }
        }
    }

    mutating func violation(_ v: Report.Violation) throws {
        try object { w in
            w.key("invariant"); w.string(v.invariant)
            w.key("message"); w.string(v.message)
            w.key("recent"); try w.array(v.recent) { $0.string($1) }
            w.key("time"); w.instant(v.time)
        }
    }

    mutating func missed(_ m: Report.Missed) throws {
        try object { w in
            w.key("count"); w.number(m.count)
            w.key("identifier"); w.string(m.identifier)
            w.key("noticed"); w.instant(m.noticed)
        }
    }

    mutating func expectation(_ e: Report.ExpectationResult) throws {
        try object { w in
            w.key("expectation"); w.string(e.expectation)
            w.key("found"); w.string(e.found)
            w.key("passed"); w.bool(e.passed)
        }
    }

    mutating func notifications(_ n: NotificationFigures) throws {
        try object { w in
            w.key("delivered"); w.number(n.delivered)
            w.key("dropped"); w.number(n.dropped)
            w.key("failure"); w.number(n.failure)
            w.key("givenUp"); w.number(n.givenUp)
            w.key("held"); w.number(n.held)
            w.key("recovery"); w.number(n.recovery)
            w.key("retries"); w.number(n.retries)
        }
    }

    /// As `WidgetDay.encode(to:)`: snake_case keys; budget, first stale and its reason `null`
    /// when absent; the fallback three only for a playlist widget, `null` when absent there.
    mutating func widgetDay(_ d: Report.WidgetDay) throws {
        try object { w in
            w.key("budget_low"); w.optional(d.budgetLow) { $0.number($1) }
            if let minutes = d.fallbackMinutes {
                w.key("fallback_from"); w.optional(d.fallbackFrom) { $0.string($1) }
                w.key("fallback_minutes"); w.number(minutes)
                w.key("fallback_since"); w.optional(d.fallbackSince) { $0.instant($1) }
            }
            w.key("family"); w.string(d.family)
            w.key("first_stale"); w.optional(d.firstStale) { $0.instant($1) }
            if let instances = d.instances { w.key("instances"); w.number(instances) }
            w.key("kind"); w.string(d.kind)
            w.key("provider_calls"); w.number(d.providerCalls)
            w.key("reloads_deferred"); w.number(d.reloadsDeferred)
            w.key("reloads_exempt"); w.number(d.reloadsExempt)
            w.key("reloads_performed"); w.number(d.reloadsPerformed)
            w.key("reloads_requested"); w.number(d.reloadsRequested)
            w.key("reloads_spaced"); w.number(d.reloadsSpaced)
            w.key("stale_minutes"); w.number(d.staleMinutes)
            w.key("stale_reason"); w.optional(d.staleReason) { $0.string($1) }
            w.key("upstream_fetches"); w.number(d.upstreamFetches)
        }
    }

    mutating func activityDay(_ a: Report.ActivityDay) throws {
        try object { w in
            w.key("id"); w.string(a.id)
            w.key("state"); w.string(a.state)
            w.key("transitions"); try w.array(a.transitions) { try $0.activityStep($1) }
            w.key("type"); w.string(a.type)
        }
    }

    /// As `ActivityStep.encode(to:)`: `from` is `null` for the first step.
    mutating func activityStep(_ s: Report.ActivityStep) throws {
        try object { w in
            w.key("applied"); w.instant(s.applied)
            w.key("at"); w.instant(s.at)
            w.key("cause"); w.string(s.cause)
            w.key("from"); w.optional(s.from) { $0.string($1) }
            w.key("to"); w.string(s.to)
        }
    }

    mutating func widgetLane(_ l: Report.WidgetLane) throws {
        try object { w in
            if let instances = l.instances { w.key("instances"); w.number(instances) }
            w.key("marks")
            try w.array(l.marks) { w, m in
                try w.object { w in
                    w.key("at"); w.instant(m.at)
                    w.key("detail"); w.string(m.detail)
                    if let instance = m.instance { w.key("instance"); w.string(instance) }
                    w.key("kind"); w.string(m.kind)
                }
            }
            w.key("widget"); w.string(l.widget)
        }
    }

    mutating func activityLane(_ l: Report.ActivityLane) throws {
        try object { w in
            w.key("id"); w.string(l.id)
            w.key("steps"); try w.array(l.steps) { try $0.activityStep($1) }
            w.key("type"); w.string(l.type)
        }
    }

    /// The value, or `null` (as `encode(_:forKey:)` writes a nil).
    mutating func optional<Value>(_ value: Value?, _ write: (inout PrettyJSONWriter, Value) -> Void) {
        if let value { write(&self, value) } else { null() }
    }
}
