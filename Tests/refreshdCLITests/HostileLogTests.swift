import Foundation
import Testing

/// Issue 20, "Signals and logs": one line per event, whatever a job writes on its output or its
/// results channel (fd 3), against a real `refreshd run`.
@Suite(.serialized) struct HostileLogTests {
    /// A job printing carriage returns, terminal escapes and line separators, and reporting
    /// results whose widget kind and activity type hold newlines that would forge log lines.
    static let script = #"""
        printf 'progress 10%%\rprogress 99%%\033[2K\033[31mred\033[0m\n'
        printf 'bell\007 del\177 sep\342\200\250 bidi\342\200\256txt\n'
        printf '%s\n' '{"reloadTimelines": "kind\n2001-01-01T00:00:00.000Z FORGED kind"}' >&3
        printf '%s\n' '{"activity": "start", "id": "a1", "type": "T\u001b[2J\n2001-01-01T00:00:00.000Z FORGED type"}' >&3
        printf '%s\n' '{"activity": "start", "id": "a2", "type": "T", "staleDate": "2026-02-30T06:00:00Z"}' >&3
        printf '%s\n' '{"activity": "start", "id": "a3", "type": "T", "startAt": "-5952-01-01T00:00:00Z"}' >&3
        printf 'not json \033]0;title\007\n' >&3
        """#

    @Test func everyLogLineIsOneEscapedLine() throws {
        let box = Sandbox()
        defer { box.remove() }
        try String(Self.script).write(toFile: box.root + "/hostile.sh", atomically: true, encoding: .utf8)
        try box.write("hostile.yaml", """
            identifier: test.hostile
            kind: processing
            command: ["/bin/sh", "\(box.root)/hostile.sh"]
            earliest: +0s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("finished test.hostile") })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let log = daemon.errors()
        Self.expectOneLinePerEvent(log)
        #expect(log.contains(#"progress 10%\rprogress 99%\u{1B}[2K\u{1B}[31mred\u{1B}[0m"#))
        #expect(log.contains(#"bell\u{7} del\u{7F} sep\u{2028} bidi\u{202E}txt"#))
        #expect(log.contains("activity start a2: staleDate: day 30: 2026-02 has 28 days"), "\(log)")
        #expect(log.contains(#"activity start a3: startAt: expected an ISO 8601 date with a zone"#), "\(log)")
        #expect(!log.contains("5952-01-01T00:00:00.000Z"), "no malformed year written")
        #expect(log.contains(#"kind\n2001-01-01T00:00:00.000Z FORGED kind"#), "\(log)")
    }

    /// Every line starts with the daemon's own timestamp (of today, not a forged one) and holds
    /// no control character, DEL, line separator or bidi control.
    static func expectOneLinePerEvent(_ log: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(4))
        for line in log.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let stamped = line.count > 24 && line.hasPrefix(today) && line.dropFirst(23).first == "Z"
            #expect(stamped, "a line without the daemon's timestamp: \(line.debugDescription)", sourceLocation: sourceLocation)
            let raw = line.unicodeScalars.first { $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
                || [0x2028, 0x2029, 0x200E, 0x200F, 0xFEFF].contains($0.value) || (0x202A...0x202E).contains($0.value)
                || (0x2066...0x2069).contains($0.value) }
            #expect(raw == nil, "a raw control character in \(line.debugDescription)", sourceLocation: sourceLocation)
        }
        #expect(log.isEmpty || log.hasSuffix("\n"), sourceLocation: sourceLocation)
    }
}
