import Foundation
import RefreshdCore

/// `refreshd simulate --nodes N --json` (issue 32): the cluster report as JSON, the same facts as
/// its text lines (durations in seconds), for a script or a dashboard to read.
extension ClusterSimulation.Report {
    /// The report's JSON shape: field names as the text report says them.
    struct JSON: Encodable {
        struct Span: Encodable { var shard: Int, node: Int, from: Double, to: Double }
        struct Mark: Encodable { var at: Double, what: String }
        var nodes: Int
        var shards: Int
        var seconds: Double
        var faults: [String]
        var launches: Int
        var takeovers: Int
        var fences: Int
        var releases: Int
        var takeoverSeconds: [Double]
        var stopSeconds: [Double]
        var duplicates: Int
        var lost: Int
        var zombieOverlaps: Int
        var frozenShardLoops: Int
        var violations: [String]
        var events: [String]
        var ownership: [Span]
        var marks: [Mark]
        struct Job: Encodable {
            var day: String, job: String, launches: Int, success: Int, failed: Int, expired: Int, crashed: Int, interrupted: Int, missed: Int
        }
        struct Widget: Encodable {
            var day: String, kind: String, family: String, requested: Int, performed: Int, deferred: Int, providerCalls: Int, staleMinutes: Int64
        }
        var jobs: [Job]
        var widgets: [Widget]
        var publications: Int
        var ignoredProviderResults: Int
    }

    static func seconds(of d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds / 1_000_000_000_000_000) / 1000
    }

    var json: JSON {
        let s = Self.seconds(of:)
        return JSON(nodes: nodes, shards: shards, seconds: s(duration), faults: faults.map(\.description),
                    launches: launches, takeovers: takeovers, fences: fences, releases: releases,
                    takeoverSeconds: takeoverTimes.map(s), stopSeconds: stopTimes.map(s),
                    duplicates: duplicates, lost: lost, zombieOverlaps: zombieOverlaps, frozenShardLoops: frozenLoops, violations: violations,
                    events: events, ownership: ownership.map { JSON.Span(shard: $0.shard, node: $0.node, from: s($0.from), to: s($0.to)) },
                    marks: marks.map { JSON.Mark(at: s($0.at), what: $0.what) },
                    jobs: jobs.map { JSON.Job(day: $0.day, job: $0.identifier, launches: $0.launches, success: $0.successes, failed: $0.failures,
                                              expired: $0.expired, crashed: $0.crashed, interrupted: $0.interrupted, missed: $0.missed) },
                    widgets: widgets.map { JSON.Widget(day: $0.day, kind: $0.kind, family: $0.family.rawValue, requested: $0.requested,
                                                       performed: $0.performed, deferred: $0.deferred, providerCalls: $0.providerCalls,
                                                       staleMinutes: $0.staleMinutes) },
                    publications: publications, ignoredProviderResults: ignoredProviderResults)
    }

    /// The report as one JSON object (keys sorted, so the same run prints the same bytes).
    package func jsonText() -> String { Self.encode(json) }

    /// Explored plans (`--explore K --json`): each plan's seed and report, and the totals.
    package static func exploredJSON(_ plans: [(seed: UInt64, report: ClusterSimulation.Report)]) -> String {
        struct Plan: Encodable { var seed: UInt64, report: JSON }
        struct Totals: Encodable { var plans: Int, takeovers: Int, fences: Int, duplicates: Int, lost: Int, violations: Int, takeoverSeconds: [Double] }
        struct Explored: Encodable { var plans: [Plan], totals: Totals }
        let reports = plans.map(\.report)
        let totals = Totals(plans: plans.count, takeovers: reports.map(\.takeovers).reduce(0, +), fences: reports.map(\.fences).reduce(0, +),
                            duplicates: reports.map(\.duplicates).reduce(0, +), lost: reports.map(\.lost).reduce(0, +),
                            violations: reports.map(\.violations.count).reduce(0, +),
                            takeoverSeconds: reports.flatMap(\.takeoverTimes).sorted().map(seconds(of:)))
        return encode(Explored(plans: plans.map { Plan(seed: $0.seed, report: $0.report.json) }, totals: totals))
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
