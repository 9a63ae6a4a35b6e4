import Foundation
import RefreshdConfig
import RefreshdCore
import Testing
@testable import RefreshdStaging

/// Which "no timeline" the playlist provider waits on: only nothing staged at all (before the
/// first staging run). A staged but empty playlist, or an unknown zone, is a failed reload.
@Suite struct PlaylistWaitingTests {
    @Test func onlyNothingStagedIsWaiting() throws {
        let dir = TemporaryDirectory()
        let provider = PlaylistTimeline(container: dir.path, zone: "UTC")
        let now = try #require(ISO8601.parse("2026-11-24T11:30:00Z"))
        let nothing = #expect(throws: PlaylistTimeline.Unavailable.self) {
            try provider.timeline(for: .systemSmall, now: now)
        }
        #expect(nothing?.nothingStaged == true)

        let date = try #require(CivilDate("2026-11-24"))
        try FileManager.default.createDirectory(atPath: provider.layout.playlists, withIntermediateDirectories: true)
        let empty = Playlist(date: date, zone: "UTC", manifest: "m", entries: [], notes: [])
        try JSONEncoder().encode(empty).write(to: URL(fileURLWithPath: provider.layout.playlistPath(date)))
        let staged = #expect(throws: PlaylistTimeline.Unavailable.self) {
            try provider.timeline(for: .systemSmall, now: now)
        }
        #expect(staged?.nothingStaged == false)
        #expect(staged?.description.contains("the playlist staged for 2026-11-24") == true, "\(String(describing: staged))")

        let unknownZone = #expect(throws: PlaylistTimeline.Unavailable.self) {
            try PlaylistTimeline(container: dir.path, zone: "Nowhere/City").timeline(for: .systemSmall, now: now)
        }
        #expect(unknownZone?.nothingStaged == false)
    }
}
