import Foundation
import RefreshdCore
import Testing
@testable import RefreshdStaging

@Suite struct PlaylistTimelineTests {
    @Test func todaysPlaylistGivesItsSwitchTimes() throws {
        let fixture = try StagingFixture()
        #expect(fixture.stage().outcome == .staged)
        let provider = PlaylistTimeline(container: fixture.container, zone: "Europe/Paris", policy: .afterStartOfTomorrow)
        let noon = try #require(ISO8601.parse("2026-11-24T11:30:00Z"))
        let timeline = try provider.timeline(now: noon)
        let playlist = try #require(fixture.playlist(fixture.tomorrow))
        #expect(timeline.fallback == nil)
        #expect(timeline.entries.map(\.date.iso8601) == ["2026-11-23T23:00:00.000Z", "2026-11-24T05:00:00.000Z",
                                                         "2026-11-24T11:00:00.000Z", "2026-11-24T17:00:00.000Z",
                                                         "2026-11-24T21:00:00.000Z"])
        #expect(timeline.entries.dropFirst().map(\.asset) == playlist.entries.map(\.asset))
        #expect(timeline.entries[0].asset == playlist.entries[3].asset)   // no day before: the evening's asset wraps
        #expect(timeline.policy == .after(try #require(ISO8601.parse("2026-11-24T23:00:00Z"))))
        let medium = try #require(timeline.entries[1].renditions["medium"])
        #expect(medium.hasPrefix(fixture.container + "/wallpaper/renditions/2026-11-24-"))
        #expect(try DecodedImage.decode(medium).width == 180)
        #expect(timeline.jsonLine.contains(#""policy":{"after":"2026-11-24T23:00:00.000Z"}"#))
        #expect(!timeline.jsonLine.contains("fallback"))
    }

    @Test func aMissedDayFallsBackToTheLatestPlaylistAndSaysSo() throws {
        let fixture = try StagingFixture()
        #expect(fixture.stage().outcome == .staged)
        let provider = PlaylistTimeline(container: fixture.container, zone: "Europe/Paris")
        let twoDaysLater = try #require(ISO8601.parse("2026-11-26T08:00:00Z"))
        let timeline = try provider.timeline(now: twoDaysLater)
        #expect(timeline.fallback == fixture.tomorrow)
        #expect(timeline.entries.count == 5)
        #expect(timeline.entries[1].date.iso8601 == "2026-11-26T05:00:00.000Z")   // re-dated to today
        #expect(timeline.policy == .atEnd)
        let line = timeline.jsonLine
        #expect(line.contains(#""fallback":"2026-11-24""#) && line.contains(#""policy":"atEnd""#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let entries = try #require(object["entries"] as? [[String: Any]])
        #expect((entries[1]["content"] as? [String: Any])?["asset"] as? String == timeline.entries[1].asset)
    }

    @Test func nothingStagedIsUnavailableNotEmpty() throws {
        let dir = TemporaryDirectory()
        let provider = PlaylistTimeline(container: dir.path, zone: "UTC")
        let error = #expect(throws: PlaylistTimeline.Unavailable.self) { try provider.timeline(now: Instant(milliseconds: 0)) }
        #expect(error?.description.hasPrefix("no playlist staged in") == true)
    }
}
