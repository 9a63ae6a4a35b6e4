import Foundation
import RefreshdCore
@testable import RefreshdRuntime
import Testing

/// The fast JSON path (`StrictJSON`, `ResultLine.fastActivity`, `Activity.recordJSON`) against
/// the Foundation path it stands in for, on generated inputs: wherever the fast path answers,
/// Foundation answers the same, byte for byte; where it does not, the caller asks Foundation.
@Suite struct StrictJSONEquivalenceTests {
    let now = Instant(milliseconds: 1_800_000_000_000)

    // MARK: Generators

    /// Pieces chosen to sit on the subset's edges: key case and order, numbers Foundation reads
    /// as Int64, UInt64, Double or Decimal, escapes, surrogates, control characters.
    static let keys = ["progress", "Progress", "a", "b", "B", "ab", "aB", "Ab", "ba", "z", "Z", "a_b", "a1", "a10", "a9",
                       "_", "é", "e\u{301}", "", "x y", "activity", "id", "content", "ALPHA", "alpha", "alphabet", "Beta"]
    static let numbers = ["0", "-0", "1", "-1", "7", "0.5", "1.0", "-0.0", "2.50", "0.1", "0.30000000000000004",
                          "3.14159265358979", "3.141592653589793", "123456789012345", "123456789012345678",
                          "1234567890123456789", "12345678901234567890", "-9223372036854775808", "9223372036854775807",
                          "18446744073709551615", "100000000000000000000", "0.000001", "123456.789", "1e2", "1.5E-3",
                          "2e400", "1e-400", "00", "01", "1.", "-", ".5", "+1", "0x10", "1.2.3", "999999999999999.9",
                          "0.123456789012345", "0.1234567890123456", "1234567.12345678"]
    static let strings = ["", "plain", "with space", "a/b", "q\\\"uote", "back\\\\slash", "nl\\n", "tab\\t", "cr\\r",
                          "bs\\b", "ff\\f", "sl\\/", "\\u0000", "\\u001f", "\\u007f", "\\u00e9", "\\u2028", "\\uD83D\\uDE00",
                          "\\uD83D", "\\uDE00", "\\uZZZZ", "\\x", "é", "日本", "😀", "raw\u{1}ctl", "raw\ttab", "\u{7f}del",
                          "e\u{301}", "2026-11-23T06:00:00Z", "2026-11-23T06:00:00.250+01:00", "2026-02-30T00:00:00Z",
                          "high", "low", "default", "immediate", "start", "update", "end"]
    static let spaces = ["", "", "", " ", "\n", "\t", "\r\n", "  "]

    static func value(_ r: inout SplitMix64, depth: Int) -> String {
        let s = r.pick(spaces)
        switch r.int(0...(depth > 3 ? 4 : 7)) {
        case 0, 1: return s + r.pick(numbers) + s
        case 2: return s + "\"" + r.pick(strings) + "\"" + s
        case 3: return s + r.pick(["true", "false", "null", "nul", "True"]) + s
        case 4: return s + "\"" + r.pick(strings) + r.pick(strings) + "\"" + s
        case 5: return object(&r, depth: depth + 1)
        default:
            let count = r.int(0...3)
            return s + "[" + (0..<count).map { _ in value(&r, depth: depth + 1) }.joined(separator: ",") + "]" + s
        }
    }

    static func object(_ r: inout SplitMix64, depth: Int, forced: [(String, String)] = []) -> String {
        var members = forced.map { "\"\($0.0)\":\($0.1)" }
        for _ in 0..<r.int(0...(forced.isEmpty ? 3 : 1)) {
            members.insert("\"\(r.pick(keys))\"" + r.pick(spaces) + ":" + value(&r, depth: depth), at: r.int(0...members.count))
        }
        let s = r.pick(spaces)
        return "{" + s + members.joined(separator: r.pick([",", ", ", ",\n"])) + s + "}"
    }

    /// An activity line: the vocabulary's fields with values of every type, now and then broken.
    static func activityLine(_ r: inout SplitMix64) -> String {
        /// Mostly a valid value, sometimes one the vocabulary refuses, sometimes anything.
        func some(_ valid: [String], _ invalid: [String] = []) -> String {
            let roll = Double.random(in: 0..<1, using: &r)
            if roll < 0.9 || (invalid.isEmpty && roll < 0.95) { return r.pick(valid) }
            return roll < 0.95 ? r.pick(invalid) : value(&r, depth: 2)
        }
        let dates = ["\"2026-11-23T06:00:00Z\"", "\"2026-11-23T06:00:00.125+02:00\""]
        let badDates = ["\"2026-02-30T00:00:00Z\"", "\"soon\"", "\"2026-11-23T06:00:00\""]
        var fields: [(String, String)] = [("activity", some(["\"start\"", "\"update\"", "\"end\""], ["\"stop\"", "\"\""]))]
        fields.append(("id", some(["\"pack-autumn-1\"", "\"a.b_c-9\"", "\"é\""], ["\".hidden\"", "\"\"", "\"x y\""])))
        if r.chance(0.8) { fields.append(("content", r.chance(0.8) ? "{\"progress\":\(r.pick(Array(numbers.prefix(16))))}" : value(&r, depth: 1))) }
        if r.chance(0.3) { fields.append(("attributes", r.chance(0.5) ? "{\"pack\":\"autumn\",\"size\":12}" : value(&r, depth: 1))) }
        if r.chance(0.5) { fields.append(("type", some(["\"WallpaperPack\""], ["\"\""]))) }
        for key in ["staleDate", "startAt", "timestamp"] where r.chance(0.4) { fields.append((key, some(dates, badDates))) }
        if r.chance(0.3) { fields.append(("relevance", some(["0.5", "1", "-2"], ["1e3", "true"]))) }
        if r.chance(0.2) { fields.append(("frequentUpdates", some(["true", "false"], ["1", "0"]))) }
        if r.chance(0.3) { fields.append(("priority", some(["\"high\"", "\"low\""], ["\"HIGH\""]))) }
        if r.chance(0.3) {
            fields.append(("dismissal", some(["\"default\"", "\"immediate\"", "{\"after\":\"2026-11-23T10:00:00Z\"}"],
                                             ["\"later\"", "{\"after\":\"2026-13-01T00:00:00Z\"}", "{\"after\":5}", "{}"])))
        }
        return object(&r, depth: 0, forced: fields)
    }

    /// A timeline line: entries with fields of every type, a policy, now and then broken.
    static func timelineLine(_ r: inout SplitMix64) -> String {
        func some(_ valid: [String], _ invalid: [String]) -> String {
            let roll = Double.random(in: 0..<1, using: &r)
            if roll < 0.85 { return r.pick(valid) }
            return roll < 0.93 ? r.pick(invalid) : value(&r, depth: 2)
        }
        var entries: [String] = []
        for _ in 0..<r.int(0...4) {
            var fields: [(String, String)] = []
            if r.chance(0.95) {
                fields.append(("date", some(["\"2026-11-23T06:00:00Z\"", "\"2026-11-23T07:00:00.500+01:00\""], ["\"2026-02-30T00:00:00Z\"", "6"])))
            }
            if r.chance(0.8) {
                fields.append(("content", r.chance(0.7) ? "{\"asset\":\"dawn\",\"rendition\":\"a/b-\(r.int(0...9)).jpg\",\"Fallback\":\"x\"}" : value(&r, depth: 1)))
            }
            if r.chance(0.2) { fields.append(("relevance", some(["0.5", "1"], ["true", "\"high\""]))) }
            if r.chance(0.3) { fields.append(("duration", some(["900", "0.5", "0"], ["-1", "true", "\"1h\"", "3300000000"]))) }
            entries.append(r.chance(0.95) ? object(&r, depth: 1, forced: fields) : value(&r, depth: 1))
        }
        var fields: [(String, String)] = []
        if r.chance(0.95) { fields.append(("entries", r.chance(0.95) ? "[" + entries.joined(separator: ",") + "]" : value(&r, depth: 1))) }
        if r.chance(0.6) {
            fields.append(("policy", some(["\"atEnd\"", "\"never\"", "{\"after\":\"2026-11-24T00:00:00Z\"}"],
                                          ["\"sometimes\"", "{\"after\":\"tomorrow\"}", "{}", "5"])))
        }
        if r.chance(0.2) { fields.append(("upstreamFetch", some(["true", "false"], ["1", "\"no\""]))) }
        if r.chance(0.05) { fields.append((r.pick(["reloadTimelines", "waiting", "activity"]), "\"x\"")) }
        return object(&r, depth: 0, forced: fields)
    }

    /// A line damaged at a few places: a byte changed, removed or doubled, or cut short.
    static func mutate(_ line: String, _ r: inout SplitMix64) -> String {
        var bytes = Array(line.utf8)
        for _ in 0..<r.int(1...3) where !bytes.isEmpty {
            let i = r.int(0...(bytes.count - 1))
            switch r.int(0...3) {
            case 0: bytes[i] = r.pick(Array("{}[]\":,.-0123456789eE \\tnufl".utf8))
            case 1: bytes.remove(at: i)
            case 2: bytes.insert(bytes[i], at: i)
            default: bytes.removeSubrange(i...)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func lines(seed: UInt64, count: Int) -> [String] {
        var r = SplitMix64(seed: seed)
        var lines: [String] = []
        for n in 0..<count {
            var line = n % 2 == 0 ? activityLine(&r) : object(&r, depth: 0)
            if r.chance(0.3) { line = mutate(line, &r) }
            lines.append(line)
        }
        return lines
    }

    static func foundationObject(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    // MARK: Reading and compact writing

    @Test func whatTheFastReaderAcceptsFoundationReadsTheSame() throws {
        var fast = 0, compacted = 0
        for line in Self.lines(seed: 22, count: 6000) {
            guard let members = StrictJSON.object(line) else { continue }
            fast += 1
            let object = try #require(Self.foundationObject(line), "Foundation refuses what the fast reader accepts: \(line)")
            #expect(Set(object.keys) == Set(members.map(\.key)) && object.count == members.count, "\(line)")
            if case .accepted = RunResults.verdict(line, number: 1) {} else { Issue.record("RunResults refuses \(line)") }
            #expect(RunResults.check([line]).accepted == [line])
            for member in members {
                guard let text = StrictJSON.compact(member.value) else { continue }
                compacted += 1
                #expect(text == ResultLine.compactJSON(object[member.key]!), "\(member.key) in \(line)")
            }
            if let text = StrictJSON.compact(.object(members)) {
                #expect(text == ResultLine.compactJSON(object), "\(line)")
            }
        }
        // The generator reaches both sides of the subset.
        #expect(fast > 1000 && compacted > 1000, "fast \(fast), compacted \(compacted)")
    }

    @Test func keysOfLettersSortAsFoundationSortsThem() throws {
        var r = SplitMix64(seed: 7)
        let letters = Array("aAbBcCzZ")
        for _ in 0..<500 {
            let keys = Set((0..<r.int(2...6)).map { _ in String((0..<r.int(1...4)).map { _ in r.pick(letters) }) })
            let line = "{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            let members = try #require(StrictJSON.object(line))
            guard let text = StrictJSON.compact(.object(members)) else { continue }  // keys equal ignoring case
            #expect(text == ResultLine.compactJSON(try #require(Self.foundationObject(line))), "\(line)")
        }
    }

    // MARK: Activity lines

    @Test func aFastActivityLineIsWhatFoundationReads() {
        var fast = 0, events = 0, refusals = 0
        for line in Self.lines(seed: 2026, count: 8000) {
            guard let read = ResultLine.fastActivity(line, owner: "job.a", namespace: "ns", now: now) else { continue }
            fast += 1
            if case .activity = read { events += 1 }
            if case .badActivity = read { refusals += 1 }
            let reference = ResultLine.parse(line, owner: "job.a", namespace: "ns", now: now)
            #expect(read == reference, "\(line)")
        }
        // Both accepted events and refused lines are compared.
        #expect(fast > 1000 && events > 200 && refusals > 200, "fast \(fast): \(events) events, \(refusals) refused")
    }

    @Test func aFastTimelineLineIsWhatFoundationReads() {
        var r = SplitMix64(seed: 10)
        var timelines = 0, refusals = 0
        for _ in 0..<4000 {
            var line = Self.timelineLine(&r)
            if r.chance(0.2) { line = Self.mutate(line, &r) }
            guard let read = ResultLine.fastParse(line, owner: "job.a", namespace: "ns", now: now) else { continue }
            if case .timeline = read { timelines += 1 }
            if case .badTimeline = read { refusals += 1 }
            #expect(read == ResultLine.parse(line, owner: "job.a", namespace: "ns", now: now), "\(line)")
        }
        #expect(timelines > 300 && refusals > 200, "\(timelines) timelines, \(refusals) refused")
    }

    // MARK: Activity records

    @Test func anActivityRecordIsWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var r = SplitMix64(seed: 99)
        func instant() -> Instant {
            Instant(milliseconds: r.pick([0, 1_800_000_000_123, -62_135_596_800_000, 253_402_300_799_999, 253_402_300_800_000,
                                          -62_167_219_200_001, Int64(r.int(0...2_000_000_000)) * 1000 + Int64(r.int(0...999))]))
        }
        func text() -> String {
            r.pick(["", "{}", "{\"progress\":0.5}", "a/b \"q\" \\ \u{0}\u{8}\u{c}\n\r\t\u{1f}\u{7f}é😀", "pack-autumn-12", "\u{2028}"])
        }
        func number() -> Double? {
            r.chance(0.3) ? nil : r.pick([0, -0.0, 1, 0.5, 1e300, .leastNonzeroMagnitude, 0.1 + 0.2, 123456789012345680, .infinity, .nan, -2.5])
        }
        for _ in 0..<3000 {
            let held: HeldActivityUpdate? = r.chance(0.3) ? HeldActivityUpdate(
                content: text(), staleDate: r.chance(0.5) ? instant() : nil, relevance: number(), timestamp: instant(),
                heldSince: instant(), coalesced: r.int(-1...40), release: instant()) : nil
            let policy: DismissalPolicy? = r.chance(0.3) ? nil : r.pick([.default, .immediate, .after(instant())])
            let activity = Activity(
                id: text(), typeName: text(), owner: r.chance(0.5) ? text() : nil, namespace: text(), attributes: text(),
                content: text(), staleDate: r.chance(0.5) ? instant() : nil, relevance: number(), frequentUpdates: r.chance(0.5),
                state: r.pick(ActivityState.allCases), stateSince: instant(), requested: instant(), start: instant(),
                lastUpdateTimestamp: r.chance(0.5) ? instant() : nil, ended: r.chance(0.5) ? instant() : nil,
                endCause: r.chance(0.5) ? r.pick(ActivityCause.allCases) : nil, dismissalPolicy: policy,
                dismissalByPolicy: r.chance(0.5) ? instant() : nil,
                highPriorityUses: (0..<r.int(0...3)).map { _ in instant() }, held: held,
                updatesApplied: r.int(0...1_000_000), updatesIgnored: r.int(-5...5))
            let reference = (try? encoder.encode(activity)).map { String(decoding: $0, as: UTF8.self) }
            #expect(activity.recordJSON == reference, "\(activity)")
        }
    }
}
