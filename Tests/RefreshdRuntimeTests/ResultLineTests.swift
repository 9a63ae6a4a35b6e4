import RefreshdCore
import RefreshdRuntime
import Testing

@Suite struct ResultLineTests {
    let now = Instant(milliseconds: 1_800_000_000_000)

    private func parse(_ line: String) -> ResultLine {
        ResultLine.parse(line, owner: "a.job", namespace: "ns", now: now)
    }

    @Test func aTimelineWithEveryField() throws {
        let line = #"{"entries": [{"date": "2026-11-23T07:00:00+01:00", "content": {"b": 1, "a": "x"}, "relevance": 0.5, "duration": 900}, {"date": "2026-11-23T05:00:00.250Z"}], "policy": {"after": "2026-11-24T00:00:00Z"}, "upstreamFetch": false}"#
        guard case let .timeline(timeline, fetched) = parse(line) else { Issue.record("\(parse(line))"); return }
        #expect(!fetched)
        #expect(timeline.entries.map(\.date.iso8601) == ["2026-11-23T05:00:00.250Z", "2026-11-23T06:00:00.000Z"])
        #expect(timeline.entries[1].content == #"{"a":"x","b":1}"#, "content is canonical JSON")
        #expect(timeline.entries[0].content == "{}")
        #expect(timeline.entries[1].relevance == 0.5 && timeline.entries[1].duration == .seconds(900))
        #expect(timeline.policy == .after(try #require(ISO8601.parse("2026-11-24T00:00:00Z"))))
        #expect(!parse(line).isLive)
    }

    @Test(arguments: [
        (#"{"entries": "soon"}"#, "entries: expected a list"),
        (#"{"entries": [{"date": "2026-11-23 06:00"}]}"#, "entry 1: date: expected an ISO 8601 date with a zone"),
        (#"{"entries": [{"date": "2026-11-23T06:00:00"}]}"#, "entry 1: date"),
        (#"{"entries": [{"date": "2026-11-23T06:00:00Z", "relevance": true}]}"#, "relevance: expected a number"),
        (#"{"entries": [{"date": "2026-11-23T06:00:00Z", "duration": -1}]}"#, "duration: expected seconds"),
        (#"{"entries": [], "policy": "sometimes"}"#, "policy: expected"),
        (#"{"entries": [], "policy": {"after": "tomorrow"}}"#, "policy: expected {\"after\""),
        (#"{"policy": "atEnd"}"#, "entries: expected a list"),
    ])
    func malformedTimelinesSayWhat(line: String, message: String) {
        guard case let .badTimeline(reason) = parse(line) else { Issue.record("\(parse(line))"); return }
        #expect(reason.contains(message), "\(reason)")
    }

    @Test func reloadsAndActivitiesAreLive() throws {
        #expect(parse(#"{"reloadTimelines": "wallpaper"}"#) == .reloadTimelines(kind: "wallpaper"))
        #expect(parse(#"{"reloadAllTimelines": true}"#) == .reloadAllTimelines)
        #expect(parse(#"{"reloadAllTimelines": true}"#).isLive)
        guard case let .activity(.request(request)) = parse(#"{"activity": "start", "id": "p-1", "type": "Pack", "attributes": {"n": 1}, "startAt": "2026-11-23T06:00:00Z", "frequentUpdates": true}"#) else {
            Issue.record("not a start"); return
        }
        #expect(request.owner == "a.job" && request.namespace == "ns" && request.attributes == #"{"n":1}"#)
        #expect(request.frequentUpdates && request.startAt == ISO8601.parse("2026-11-23T06:00:00Z"))
        #expect(parse(#"{"activity": "update", "id": "p-1", "content": {"progress": 0.5}, "priority": "high"}"#)
                == .activity(.update(ActivityUpdate(id: "p-1", content: #"{"progress":0.5}"#, timestamp: now, priority: .high))))
        #expect(parse(#"{"activity": "end", "id": "p-1", "dismissal": "immediate"}"#)
                == .activity(.end(id: "p-1", content: nil, policy: .immediate, timestamp: now)))
    }

    @Test(arguments: [
        (#"{"activity": "pause", "id": "p"}"#, "expected start, update or end"),
        (#"{"activity": "start", "id": "../x", "type": "T"}"#, "id: expected 1 to 128 letters"),
        (#"{"activity": "start", "id": "p"}"#, "type: expected"),
        (#"{"activity": "update", "id": "p"}"#, "content: expected an object"),
        (#"{"activity": "update", "id": "p", "content": {}, "priority": "urgent"}"#, "priority: expected high or low"),
        (#"{"activity": "end", "id": "p", "dismissal": "later"}"#, "dismissal: expected"),
        (#"{"activity": "update", "id": "p", "content": {}, "timestamp": "now"}"#, "timestamp: expected an ISO 8601 date"),
    ])
    func badActivityLinesSayWhat(line: String, message: String) {
        guard case let .badActivity(reason) = parse(line) else { Issue.record("\(parse(line))"); return }
        #expect(reason.contains(message), "\(reason)")
        #expect(parse(line).isLive)
    }

    @Test func otherResultsAreLeftAlone() {
        #expect(parse(#"{"files": 12}"#) == .other)
        #expect(parse("not json") == .other)
    }

    /// Seeded mutations of good lines (bytes replaced, cut, repeated; huge numbers and dates):
    /// every one is classified, none crashes, and every accepted date is within the years 1...9999.
    @Test func mutatedLinesNeverCrash() {
        let seeds = [
            #"{"entries": [{"date": "2026-11-23T06:00:00Z", "content": {"a": 1}, "relevance": 1, "duration": 60}], "policy": {"after": "2026-11-24T00:00:00Z"}}"#,
            #"{"activity": "update", "id": "p-1", "content": {"progress": 0.5}, "timestamp": "2026-11-23T06:00:00.5+14:00", "priority": "high"}"#,
            #"{"activity": "start", "id": "p", "type": "T", "staleDate": "9999-12-31T23:59:59Z", "startAt": "0001-01-01T00:00:00Z"}"#,
        ]
        let alphabet = Array(#"{}[]":,0123456789.eE+-Zzt é"#.utf8) + [0x00, 0x0A, 0xFF, 0xC3]
        var random = SplitMix64(seed: 7)
        for round in 0..<3000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.removeSubrange(at...)
                case 2: bytes.insert(contentsOf: Array("9999999999999999999999".utf8), at: at)
                default: bytes.insert(contentsOf: Array(bytes[at...].prefix(8)), at: at)
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            let line = String(decoding: bytes, as: UTF8.self)
            if case let .timeline(timeline, _) = parse(line) {
                #expect(timeline.entries.allSatisfy { $0.date > .earliest && $0.date < .latest }, "\(line)")
            }
        }
    }
}
