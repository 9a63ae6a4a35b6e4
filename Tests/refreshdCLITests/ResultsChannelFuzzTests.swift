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
            case let .badTimeline(reason), let .badActivity(reason), let .badInstances(reason):
                counts["bad", default: 0] += 1
                Self.expectOneLine(reason, line)
            case .waiting:
                counts["waiting", default: 0] += 1
            case .instances:
                counts["instances", default: 0] += 1
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

    /// End to end: a real daemon runs a job (and a widget provider) replaying fuzzed lines on
    /// fd 3 and echoing some on stdout, beside a one-second heartbeat. No crash, the heartbeat
    /// launched less than 50 ms late, every log line one line, nothing written outside the
    /// state directory (and the shared container in it), no process left behind.
    @Test func aRealDaemonReplayingFuzzedLinesStaysUp() throws {
        let box = Sandbox()
        defer { box.remove() }
        let fuzzDirectory = box.root + "/fuzz", home = box.root + "/home", cwd = box.root + "/cwd"
        for directory in [fuzzDirectory, home, cwd] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var fuzz = ResultsChannelFuzz(seed: Self.seed ^ 0xE2E)
        // One file per run id (run ids are shared by every job): 64 lines, the channel's bound.
        for runID in 1...80 {
            var bytes: [UInt8] = []
            for _ in 0..<32 { bytes += fuzz.line() + [0x0A] }
            #expect(FileManager.default.createFile(atPath: "\(fuzzDirectory)/lines-\(runID)", contents: Data(bytes)))
        }
        let script = box.root + "/replay.sh"
        try """
            f="\(fuzzDirectory)/lines-$REFRESH_RUN_ID"
            [ -f "$f" ] || exit 0
            cat "$f" >&3
            head -c 2000 "$f"
            """.write(toFile: script, atomically: true, encoding: .utf8)
        try box.write("heartbeat.yaml", """
            identifier: test.heartbeat
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1s}
            """)
        try box.write("replay.yaml", """
            identifier: test.replay
            kind: processing
            command: ["/bin/sh", "\(script)"]
            allowance: 5s
            resubmit: {after: 300ms}
            """)
        try box.write("widget.yaml", """
            identifier: test.widget
            kind: timeline
            command: ["/bin/sh", "\(script)"]
            allowance: 5s
            widget:
              kind: \(fuzz.widgetKind)
              families: [systemSmall]
              budget: 100
            """)
        let before = try Self.listing(box.root, excluding: ["state"])
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   environment: ["HOME": home], directory: cwd)
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 30) { daemon.errors().components(separatedBy: "finished test.replay").count > 12 },
                "the replay job runs again and again")
        #expect(waitFor(timeout: 5) { daemon.errors().components(separatedBy: "launched test.heartbeat").count > 5 })
        daemon.signal(SIGTERM)
        let status = daemon.wait(timeout: 20)
        let log = daemon.errors()
        #expect(status == 0, "no crash, a clean stop")
        HostileLogTests.expectOneLinePerEvent(log)
        #expect(log.contains("result refused") || log.contains("activity refused"), "the fuzz reached the parsers")

        // The heartbeat's lateness, as the daemon logs it, after the first launch.
        let latenesses = log.split(separator: "\n").filter { $0.contains("launched test.heartbeat") }.dropFirst()
            .compactMap { line -> Int? in
                guard let range = line.range(of: #", (\d+)ms after earliest"#, options: .regularExpression) else { return -1 }
                return Int(line[range].dropFirst(2).prefix { $0.isNumber })
            }
        #expect(latenesses.count >= 4)
        #expect(latenesses.allSatisfy { $0 >= 0 && $0 < 50 }, "heartbeat lateness in ms: \(latenesses)")

        // Nothing written outside the state directory: the rest of the sandbox (jobs, the
        // fuzz files, the daemon's home and working directory) is as it was.
        #expect(try Self.listing(box.root, excluding: ["state"]) == before)
        // No process left behind: nothing runs from the sandbox any more.
        #expect(waitFor(timeout: 5) { Self.processes(mentioning: box.root).isEmpty },
                "left behind: \(Self.processes(mentioning: box.root))")
    }

    /// Every path under `root` (but `excluding` top-level names) with its size and mtime.
    static func listing(_ root: String, excluding: Set<String>) throws -> [String] {
        var out: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: root) else { return out }
        while let path = walker.nextObject() as? String {
            if excluding.contains(String(path.split(separator: "/").first ?? "")) { continue }
            var info = stat()
            _ = lstat(root + "/" + path, &info)
            out.append("\(path) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
        }
        return out.sorted()
    }

    /// Pids whose command line mentions `text`.
    static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
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
