import Foundation
import RefreshdCore
import Testing
@testable import RefreshdStaging

@Suite struct PlaylistTimelineTests {
    /// An entry's content as an object.
    static func content(_ entry: TimelineEntry) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(entry.content.utf8)) as? [String: String])
    }

    @Test func todaysPlaylistGivesItsSwitchTimesWithTheFamilysRenditionOnly() throws {
        let fixture = try StagingFixture()
        #expect(fixture.stage().outcome == .staged)
        let provider = PlaylistTimeline(container: fixture.container, zone: "Europe/Paris", policy: .afterStartOfTomorrow)
        let noon = try #require(ISO8601.parse("2026-11-24T11:30:00Z"))
        let staged = try provider.timeline(for: .systemMedium, now: noon)
        let timeline = staged.timeline
        let playlist = try #require(fixture.playlist(fixture.tomorrow))
        #expect(staged.fallback == nil)
        #expect(timeline.entries.map(\.date.iso8601) == ["2026-11-23T23:00:00.000Z", "2026-11-24T05:00:00.000Z",
                                                         "2026-11-24T11:00:00.000Z", "2026-11-24T17:00:00.000Z",
                                                         "2026-11-24T21:00:00.000Z"])
        let contents = try timeline.entries.map(Self.content)
        #expect(contents.dropFirst().map { $0["asset"] } == playlist.entries.map(\.asset))
        #expect(contents[0]["asset"] == playlist.entries[3].asset)   // no day before: the evening's asset wraps
        #expect(contents.allSatisfy { Set($0.keys) == ["asset", "rendition"] })
        #expect(timeline.policy == .after(try #require(ISO8601.parse("2026-11-24T23:00:00Z"))))
        let medium = try #require(contents[1]["rendition"])
        #expect(medium == playlist.entries[0].renditions["systemMedium"])
        #expect(medium.hasPrefix("wallpaper/renditions/2026-11-24-"))   // relative to the container
        #expect(try DecodedImage.decode(fixture.layout.absolute(medium)).width == 180)
        let small = try provider.timeline(for: .systemSmall, now: noon).timeline
        #expect(try Self.content(small.entries[1])["rendition"] == playlist.entries[0].renditions["systemSmall"])
        #expect(staged.jsonLine.contains(#""policy":{"after":"2026-11-24T23:00:00.000Z"}"#))
        #expect(!staged.jsonLine.contains("fallback"))
        // A family the playlist was not staged for still gets the assets, without a rendition.
        let inline = try provider.timeline(for: .accessoryInline, now: noon).timeline
        #expect(try inline.entries.map(Self.content).allSatisfy { $0["rendition"] == nil && $0["asset"] != nil })
    }

    @Test func aMissedDayFallsBackToTheLatestPlaylistAndSaysSo() throws {
        let fixture = try StagingFixture()
        #expect(fixture.stage().outcome == .staged)
        let provider = PlaylistTimeline(container: fixture.container, zone: "Europe/Paris")
        let twoDaysLater = try #require(ISO8601.parse("2026-11-26T08:00:00Z"))
        let staged = try provider.timeline(for: .systemLarge, now: twoDaysLater)
        #expect(staged.fallback == fixture.tomorrow)
        #expect(staged.timeline.entries.count == 5)
        #expect(staged.timeline.entries[1].date.iso8601 == "2026-11-26T05:00:00.000Z")   // re-dated to today
        #expect(staged.timeline.policy == .atEnd)
        #expect(try Self.content(staged.timeline.entries[1])["fallback"] == "2026-11-24")
        let line = staged.jsonLine
        #expect(line.contains(#""fallback":"2026-11-24""#) && line.contains(#""policy":"atEnd""#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let entries = try #require(object["entries"] as? [[String: Any]])
        let first = try Self.content(staged.timeline.entries[1])
        #expect((entries[1]["content"] as? [String: String]) == first)
        #expect(entries[1]["date"] as? String == "2026-11-26T05:00:00.000Z")
    }

    @Test func nothingStagedIsUnavailableNotEmpty() throws {
        let dir = TemporaryDirectory()
        let provider = PlaylistTimeline(container: dir.path, zone: "UTC")
        let error = #expect(throws: PlaylistTimeline.Unavailable.self) {
            try provider.timeline(for: .systemSmall, now: Instant(milliseconds: 0))
        }
        #expect(error?.description.hasPrefix("no playlist staged yet in") == true)
        #expect(error?.nothingStaged == true)  // the provider waits: not a failure
    }
}
