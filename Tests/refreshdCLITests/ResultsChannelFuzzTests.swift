import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing

/// Issue 20, "Done when": a bounded, seeded, structure-aware fuzz of the results channel, at
/// the parser level and end to end against a real `refreshd run`.
@Suite(.serialized) struct ResultsChannelFuzzTests {
    static let seed: UInt64 = 0x2026_1126

    /// Dates from the grammar with known validity: accepted exactly when valid, and every
    /// accepted date formats back and parses to the same instant.
    @Test func datesAreAcceptedExactlyWhenValid() {
        var fuzz = ResultsChannelFuzz(seed: Self.seed)
        for _ in 0..<5000 {
            let (text, valid) = fuzz.date()
            switch ISO8601.parseStrict(text) {
            case let .success(instant):
                #expect(valid, "accepted \(text.debugDescription)")
                #expect(ISO8601.parse(instant.iso8601) == instant && instant.iso8601.count == 24, "\(text)")
            case let .failure(refusal):
                #expect(!valid, "refused \(text.debugDescription): \(refusal)")
                #expect(!refusal.description.isEmpty)
            }
        }
    }

    /// Lines at the parser level: no crash, every refusal has a reason, the log line it makes
    /// is one line, and every accepted value round-trips (dates and canonical JSON content).
    @Test func fuzzedLinesAreParsedOrRefusedWithAReason() throws {
        var fuzz = ResultsChannelFuzz(seed: Self.seed)
        let now = Instant(milliseconds: 1_800_000_000_000)
        let started = ContinuousClock.now
        var counts: [String: Int] = [:]
        for _ in 0..<4000 {
            guard ContinuousClock.now - started < .seconds(20) else { break }
            let line = String(decoding: fuzz.line(), as: UTF8.self)
            let checked = RunResults.check([line])
            for problem in checked.problems { Self.expectOneLine(problem, line) }
            guard let accepted = checked.accepted.first else { counts["refused", default: 0] += 1; continue }
            #expect(RunResults.check([accepted]).accepted == [accepted], "an accepted line is accepted again")
            let parsed = ResultLine.parse(accepted, owner: "t.fuzz", namespace: "fuzz", now: now)
            switch parsed {
            case let .badTimeline(reason), let .badActivity(reason):
                counts["bad", default: 0] += 1
                Self.expectOneLine(reason, line)
            case let .timeline(timeline, _):
                counts["timeline", default: 0] += 1
                for entry in timeline.entries {
                    Self.expectRoundTrip(entry.date, line)
                    Self.expectCanonical(entry.content, line)
                }
                if case let .after(date) = timeline.policy { Self.expectRoundTrip(date, line) }
            case let .activity(event):
                counts["activity", default: 0] += 1
                switch event {
                case let .request(r):
                    for date in [r.staleDate, r.startAt].compactMap({ $0 }) { Self.expectRoundTrip(date, line) }
                    Self.expectCanonical(r.content, line)
                    Self.expectCanonical(r.attributes, line)
                case let .update(u):
                    for date in [u.staleDate, u.timestamp].compactMap({ $0 }) { Self.expectRoundTrip(date, line) }
                    Self.expectCanonical(u.content, line)
                case let .end(_, content, policy, timestamp):
                    Self.expectRoundTrip(timestamp, line)
                    if case let .after(date) = policy { Self.expectRoundTrip(date, line) }
                    if let content { Self.expectCanonical(content, line) }
                default:
                    Issue.record("a results line made \(event)")
                }
            case let .reloadTimelines(kind):
                counts["reload", default: 0] += 1
                #expect(!kind.isEmpty)
            case .reloadAllTimelines, .other:
                counts["other", default: 0] += 1
            }
        }
        // The mix is useful: every kind of outcome happens.
        for key in ["refused", "bad", "timeline", "activity", "reload"] {
            #expect(counts[key, default: 0] >= 50, "\(key): \(counts)")
        }
    }

    static func expectOneLine(_ reason: String, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!reason.isEmpty, "a refusal without a reason for \(line.debugDescription)", sourceLocation: sourceLocation)
        let message = RuntimeObservation(time: Instant(milliseconds: 0), kind: .results, message: reason).message
        #expect(!message.unicodeScalars.contains(where: EchoText.needsEscape),
                "a raw control character in \(message.debugDescription)", sourceLocation: sourceLocation)
    }

    static func expectRoundTrip(_ date: Instant, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = date.iso8601
        #expect(text.count == 24 && ISO8601.parse(text) == date, "\(text) from \(line.debugDescription)",
                sourceLocation: sourceLocation)
    }

    static func expectCanonical(_ content: String, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let value = try? JSONSerialization.jsonObject(with: Data(content.utf8), options: [.fragmentsAllowed]),
              let again = try? JSONSerialization.data(withJSONObject: value,
                                                      options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else {
            Issue.record("content \(content.debugDescription) is not JSON, from \(line.debugDescription)", sourceLocation: sourceLocation)
            return
        }
        #expect(String(decoding: again, as: UTF8.self) == content, "content does not round-trip: \(line.debugDescription)",
                sourceLocation: sourceLocation)
    }
}
