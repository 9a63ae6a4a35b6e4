import RefreshdCore
import RefreshdRuntime
import Testing

/// `{"waiting": REASON}`: a timeline provider with nothing to show yet, read as such (not as
/// "no timeline on the results channel", a failure).
@Suite struct ResultLineWaitingTests {
    private func parse(_ line: String) -> ResultLine {
        ResultLine.parse(line, owner: "a.job", namespace: "ns", now: Instant(milliseconds: 1_800_000_000_000))
    }

    @Test func aWaitingLineIsRead() {
        #expect(parse(#"{"waiting": "no playlist staged yet in /s/wallpaper/playlists"}"#)
            == .waiting("no playlist staged yet in /s/wallpaper/playlists"))
        #expect(!parse(#"{"waiting": "x"}"#).isLive)
    }

    @Test(arguments: [#"{"waiting": 3}"#, #"{"waiting": ""}"#, #"{"waiting": null}"#])
    func aWaitingLineWithoutAReasonIsRefused(_ line: String) {
        #expect(parse(line) == .badTimeline("waiting: expected the reason, a string"), "\(line)")
    }

    /// A timeline in the same line wins: `entries` says what it is.
    @Test func entriesMakeItATimeline() {
        guard case .timeline = parse(#"{"entries": [], "waiting": "x"}"#) else { Issue.record("not a timeline"); return }
    }
}
