import Foundation
import Testing
import RefreshdCore
@testable import RefreshdSimulation

/// `writePrettyJSON` writes every value of the report by hand: it must be byte for byte what
/// `JSONEncoder` with `[.prettyPrinted, .sortedKeys]` writes, for every field of every type, with
/// strings that need escaping, keys that sort differently by bytes and by letters, values absent
/// and present. `full` has every optional set and every list non-empty (checked by reflection),
/// so a field added to a type but not to the writer makes the texts differ.
@Suite struct SimulationReportWriterTests {
    /// Quotes, backslashes, slashes, every control character, DEL, non-ASCII (composed and not),
    /// line and paragraph separators, a byte-order mark, emoji and a flag.
    static let hostile: [String] = [
        "quote \" backslash \\ slash / and \\/ and </script>",
        String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) })) + "\u{7F}",
        "é e\u{301} ü 日本語 \u{2028}\u{2029} \u{FEFF}\u{200B}",
        "😀 👩‍👩‍👧 🇳🇴 \u{10FFFF}",
        "",
        "com.example/refresh[user \"1\"]#systemSmall",
    ]

    static func text(_ n: Int) -> String { hostile[n % hostile.count] }

    static func at(_ n: Int64) -> Instant { Instant(milliseconds: 1_795_392_000_000 + n * 61_001) }

    static func figures(_ n: Int) -> SimulationReport.Figures {
        var f = SimulationReport.Figures()
        f.launched = n + 1
        f.success = n + 2
        f.failure = n + 3
        f.expired = n + 4
        f.crashed = n + 5
        f.interrupted = n + 6
        f.missed = n + 7
        f.latenessP50 = Int64(n) * 1_000_003
        f.latenessMax = n == 0 ? Int64.max : -Int64(n)
        return f
    }

    static func widgetDay(_ n: Int, filled: Bool, fallback: Bool = true) -> SimulationReport.WidgetDay {
        var d = SimulationReport.WidgetDay(WidgetDayCounter(day: "2026-11-23", widget: WidgetID(kind: "k", family: .systemSmall)))
        d.kind = text(n)
        d.family = text(n + 1)
        d.reloadsRequested = n + 1
        d.reloadsPerformed = n + 2
        d.reloadsDeferred = n + 3
        d.reloadsExempt = n + 4
        d.reloadsSpaced = n + 5
        d.providerCalls = n + 6
        d.upstreamFetches = n + 7
        d.staleMinutes = Int64(n) + 8
        if filled {
            d.budgetLow = n == 0 ? 0 : -n
            d.firstStale = at(Int64(n))
            d.staleReason = text(n + 2)
            d.instances = n + 9
        }
        if fallback {
            d.fallbackMinutes = Int64(n) + 10
            if filled {
                d.fallbackFrom = text(n + 3)
                d.fallbackSince = at(Int64(n) + 1)
            }
        }
        return d
    }

    static func step(_ n: Int, from: Bool) -> SimulationReport.ActivityStep {
        .init(at: at(Int64(n)), applied: at(Int64(n) + 1), from: from ? text(n) : nil, to: text(n + 1), cause: text(n + 2))
    }

    static func run(_ n: Int, ended: Bool) -> SimulationReport.Run {
        .init(runID: n == 0 ? Int64.max : Int64(n), earliest: at(Int64(n)), started: at(Int64(n) + 1),
              ended: ended ? at(Int64(n) + 2) : nil, outcome: ended ? Outcome.allCases[n % Outcome.allCases.count] : nil)
    }

    /// Every field set, every list and dictionary non-empty; instants before 1970 and after 9999.
    static var full: SimulationReport {
        var notifications = NotificationFigures()
        notifications.failure = 1
        notifications.recovery = 2
        notifications.delivered = 3
        notifications.retries = 4
        notifications.givenUp = 5
        notifications.dropped = 6
        notifications.held = 7
        // Keys whose order differs by bytes and by letters, numbers, case, and escapes.
        let keys = ["a10", "a9", "B", "a", "Z", "_", "~", "é", "T[K]", "a/b", "\u{1}", "😀"] + hostile
        var jobs: [String: SimulationReport.Figures] = [:]
        for (n, key) in keys.enumerated() { jobs[key] = figures(n) }
        let days = (0..<2).map { n in
            SimulationReport.Day(date: text(n), total: figures(n), jobs: jobs,
                                 widgets: (0..<3).map { widgetDay(n + $0, filled: true) },
                                 activities: (0..<2).map { a in
                                     .init(id: text(a), type: text(a + 1), state: text(a + 2),
                                           transitions: (0..<2).map { step(n + a + $0, from: true) })
                                 })
        }
        var report = SimulationReport(
            scenario: text(0), start: Instant(milliseconds: -86_400_123), end: Instant(milliseconds: 253_402_300_800_001),
            seed: UInt64.max, timeZone: text(2), days: days,
            jobs: (0..<3).map { n in
                .init(identifier: text(n), figures: figures(n), runs: (0..<4).map { run(n + $0, ended: true) },
                      instances: n, failingInstances: (0..<2).map { .init(identifier: text(n + $0), failures: n + $0) })
            },
            total: figures(9),
            missed: (0..<3).map { .init(identifier: text($0), noticed: at(Int64($0)), count: $0 == 0 ? Int.min : $0) },
            faults: (0..<3).map { .init(kind: text($0), at: at(Int64($0)), until: at(Int64($0) + 9), detail: text($0 + 1)) },
            downtime: [.init(kind: text(1), at: at(3), until: at(4), detail: text(5))],
            violations: (0..<2).map { .init(time: at(Int64($0)), invariant: text($0), message: text($0 + 1), recent: hostile) },
            expectations: (0..<2).map { .init(expectation: text($0), passed: $0 == 0, found: text($0 + 3)) },
            steps: Int.max)
        report.widgetLanes = (0..<2).map { n in
            .init(widget: text(n), marks: (0..<3).map { .init(kind: text($0), at: at(Int64($0)), detail: text($0 + 1), instance: text(n + $0)) },
                  instances: n + 1)
        }
        report.activityLanes = (0..<2).map { n in .init(id: text(n), type: text(n + 1), steps: (0..<3).map { step(n + $0, from: true) }) }
        report.notifications = notifications
        return report
    }

    /// Every optional absent (left out or `null`, as each type's encoding has it), every list and
    /// dictionary empty, next to rows with some of each.
    static var sparse: SimulationReport {
        let days = [
            SimulationReport.Day(date: "", total: SimulationReport.Figures(), jobs: [:]),
            SimulationReport.Day(date: text(1), total: figures(1), jobs: ["": SimulationReport.Figures()],
                                 widgets: [widgetDay(0, filled: false, fallback: false), widgetDay(1, filled: false)],
                                 activities: [.init(id: "", type: "", state: "", transitions: []),
                                              .init(id: text(1), type: text(2), state: text(3), transitions: [step(1, from: false)])]),
        ]
        var report = SimulationReport(
            scenario: "", start: at(0), end: at(1), seed: 0, timeZone: "", days: days,
            jobs: [.init(identifier: "", figures: SimulationReport.Figures(), runs: []),
                   .init(identifier: text(1), figures: figures(1), runs: [run(1, ended: false), run(2, ended: true)],
                         instances: 0, failingInstances: [])],
            total: SimulationReport.Figures(), missed: [], faults: [.init(kind: "", at: nil, until: nil, detail: "")],
            downtime: [.init(kind: text(0), at: at(1), until: nil, detail: text(3))],
            violations: [.init(time: at(0), invariant: "", message: "", recent: [])], expectations: [], steps: 0)
        report.widgetLanes = [.init(widget: "", marks: []), .init(widget: text(0), marks: [.init(kind: "", at: at(0), detail: "")])]
        report.activityLanes = [.init(id: "", type: "", steps: [])]
        return report
    }

    /// What `JSONEncoder` writes, and the newline `simulate --json` ends with.
    static func encoderText(_ report: SimulationReport) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(report)) + [0x0A]
    }

    static func written(_ report: SimulationReport, chunk: Int = 1 << 20) throws -> [UInt8] {
        var out: [UInt8] = []
        try report.writePrettyJSON(chunk: chunk) { out.append(contentsOf: $0) }
        return out
    }

    /// The paths below `value` holding a nil or an empty list or dictionary.
    static func gaps(_ value: Any, at path: String = "report") -> [String] {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first else { return [path] }
            return gaps(wrapped.value, at: path)
        case .collection, .dictionary, .set:
            if mirror.children.isEmpty { return [path + " (empty)"] }
            return mirror.children.flatMap { gaps($0.value, at: path + "[]") }
        default:
            return mirror.children.flatMap { gaps($0.value, at: path + "." + ($0.label ?? "?")) }
        }
    }

    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        let context = { (bytes: [UInt8]) in String(decoding: bytes[max(0, index - 80)..<min(bytes.count, index + 40)], as: UTF8.self) }
        return "first difference at byte \(index) of \(a.count) / \(b.count):\nwritten: \(context(a))\nencoder: \(context(b))"
    }

    @Test func theFullReportHasNoFieldLeftEmpty() {
        #expect(Self.gaps(Self.full) == [], "fill the new field in `full` (and write it in PrettyJSONWriter)")
    }

    @Test func everyFieldFilledIsWrittenAsJSONEncoderWritesIt() throws {
        let ours = try Self.written(Self.full), theirs = try Self.encoderText(Self.full)
        let same = ours == theirs
        #expect(same, "\(Self.firstDifference(ours, theirs))")
    }

    @Test func absentValuesAndEmptyListsAreWrittenAsJSONEncoderWritesThem() throws {
        let ours = try Self.written(Self.sparse), theirs = try Self.encoderText(Self.sparse)
        let same = ours == theirs
        #expect(same, "\(Self.firstDifference(ours, theirs))")
    }

    /// Pieces end after any list's element, in any list: joined, they are the same bytes.
    @Test(arguments: [1, 64, 4096])
    func piecesOfEveryListJoinToTheSameBytes(chunk: Int) throws {
        var pieces = 0
        var joined: [UInt8] = []
        try Self.full.writePrettyJSON(chunk: chunk) {
            #expect(!$0.isEmpty)
            joined.append(contentsOf: $0)
            pieces += 1
        }
        let theirs = try Self.encoderText(Self.full)
        let same = joined == theirs
        #expect(same, "\(Self.firstDifference(joined, theirs))")
        #expect(pieces > 2, "\(pieces) pieces")
    }
}
