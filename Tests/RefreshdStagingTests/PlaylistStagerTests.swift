import Foundation
import RefreshdConfig
import RefreshdCore
import Synchronization
import Testing
@testable import RefreshdStaging

@Suite struct PlaylistStagerTests {
    @Test func stagesTomorrowWithRenditionsAndAsksForAReload() throws {
        let fixture = try StagingFixture()
        let report = fixture.stage()
        #expect(report.outcome == .staged, "\(report.log)")
        #expect(report.date == fixture.tomorrow)
        #expect(report.results == [#"{"reloadTimelines":"example.wallpaper"}"#])
        #expect(report.renditionsWritten == 12)
        let playlist = try #require(fixture.playlist(fixture.tomorrow))
        #expect(playlist.entries.map(\.time.description) == ["06:00", "12:00", "18:00", "22:00"])
        #expect(playlist.entries.map(\.at) == ["2026-11-24T05:00:00.000Z", "2026-11-24T11:00:00.000Z",
                                               "2026-11-24T17:00:00.000Z", "2026-11-24T21:00:00.000Z"])
        #expect(Set(playlist.entries.map(\.asset)).count == 4)
        #expect(fixture.inconsistencies().isEmpty)
        #expect(fixture.temporaryFiles().isEmpty)
        // The sideways source, if chosen, comes out at the family's size like the others.
        #expect(playlist.entries.allSatisfy { $0.renditions.keys.sorted() == ["systemLarge", "systemMedium", "systemSmall"] })
    }

    @Test func aSecondRunWritesNothing() throws {
        let fixture = try StagingFixture()
        let first = fixture.stage()
        let before = try #require(FileManager.default.contents(atPath: fixture.layout.playlistPath(fixture.tomorrow)))
        let second = fixture.stage()
        #expect(first.outcome == .staged)
        #expect(second.outcome == .alreadyStaged)
        #expect(second.steps == 0 && second.renditionsWritten == 0)
        #expect(second.results == first.results)
        #expect(FileManager.default.contents(atPath: fixture.layout.playlistPath(fixture.tomorrow)) == before)
    }

    @Test func changedOptionsOrLibraryRestageTheDay() throws {
        let fixture = try StagingFixture()
        _ = fixture.stage()
        let old = try #require(fixture.playlist(fixture.tomorrow))
        var options = fixture.options
        options.seed = 99
        let report = fixture.stage(options)
        #expect(report.outcome == .staged)
        let new = try #require(fixture.playlist(fixture.tomorrow))
        #expect(new.manifest != old.manifest)
        #expect(fixture.renditionFolders() == ["2026-11-24-\(new.manifest)"])   // the superseded folder is gone
        try fixture.dir.image("added.jpg", width: 300, height: 200, in: fixture.library)
        #expect(fixture.stage(options).outcome == .staged)
        #expect(fixture.playlist(fixture.tomorrow)?.manifest != new.manifest)
    }

    /// A kill after every write step in turn: the container is always consistent (the old
    /// complete playlist or the new complete one), and the next run completes the day.
    @Test func stoppedAtEveryWriteStepTheContainerStaysConsistent() throws {
        let reference = try StagingFixture()
        var changed = reference.options
        changed.seed = 2
        _ = reference.stage()
        let full = reference.stage(changed)
        #expect(full.outcome == .staged)
        let expected = try #require(reference.playlist(reference.tomorrow))
        #expect(full.steps > 20)

        let fixture = try StagingFixture()
        _ = fixture.stage()
        let old = try #require(fixture.playlist(fixture.tomorrow))
        let pristine = fixture.dir.file("pristine")
        try FileManager.default.copyItem(atPath: fixture.container, toPath: pristine)
        for stopAt in 1..<full.steps {
            try FileManager.default.removeItem(atPath: fixture.container)
            try FileManager.default.copyItem(atPath: pristine, toPath: fixture.container)
            let stopped = fixture.stage(changed, afterWriteStep: { $0 < stopAt })
            #expect(stopped.outcome == .stopped, "step \(stopAt)")
            #expect(fixture.inconsistencies() == [], "after step \(stopAt)")
            let seen = try #require(fixture.playlist(fixture.tomorrow))
            #expect(seen == old || seen == expected, "after step \(stopAt): a playlist neither old nor new")
            let resumed = fixture.stage(changed)
            #expect(resumed.succeeded, "after step \(stopAt): \(resumed.log)")
            #expect(fixture.playlist(fixture.tomorrow) == expected)
            #expect(fixture.inconsistencies() == [])
            #expect(fixture.temporaryFiles() == [], "after step \(stopAt)")
            #expect(fixture.renditionFolders() == ["2026-11-24-\(expected.manifest)"])
        }
    }

    @Test func expiryStopsBetweenFilesAndTheNextRunContinues() throws {
        let fixture = try StagingFixture()
        let expired = Atomic<Bool>(false)
        let report = fixture.stage(afterWriteStep: { step in
            if step == 6 { expired.store(true, ordering: .relaxed) }   // three renditions renamed
            return true
        }, isExpired: { expired.load(ordering: .relaxed) })
        #expect(report.outcome == .expired)
        #expect(report.renditionsWritten == 3 && report.steps == 6)
        #expect(report.log.last?.contains("the next run continues") == true)
        #expect(fixture.playlist(fixture.tomorrow) == nil)
        #expect(fixture.temporaryFiles().isEmpty)
        let next = fixture.stage()
        #expect(next.outcome == .staged)
        #expect(next.renditionsReused == 3 && next.renditionsWritten == 9)
        #expect(fixture.inconsistencies().isEmpty)
    }

    @Test func unreadableAssetsAreSkippedWithTheirReasons() throws {
        let fixture = try StagingFixture(images: 3)
        let good = try #require(FileManager.default.contents(atPath: fixture.library + "/img0.jpg"))
        try Data().write(to: URL(fileURLWithPath: fixture.library + "/zero.jpg"))
        try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: fixture.library + "/cut.jpg"))
        var corrupt = good
        for i in stride(from: 700, to: corrupt.count - 100, by: 61) { corrupt[i] = 0xFF; corrupt[i + 1] = 0xD9 }
        try corrupt.write(to: URL(fileURLWithPath: fixture.library + "/corrupt.jpg"))
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: fixture.library + "/notes.png"))
        let report = fixture.stage()
        #expect(report.outcome == .staged, "\(report.log)")
        let lines = report.log.joined(separator: "\n")
        #expect(lines.contains("\(fixture.library)/zero.jpg: skipped: empty file (0 bytes)"))
        #expect(lines.contains("\(fixture.library)/cut.jpg: skipped: corrupt or truncated JPEG"))
        #expect(lines.contains("\(fixture.library)/corrupt.jpg: skipped: corrupt or truncated JPEG"))
        #expect(lines.contains("\(fixture.library)/notes.png: skipped: not a JPEG or PNG image"))
        #expect(lines.contains("only 3 of 4 assets could be staged"))
        let playlist = try #require(fixture.playlist(fixture.tomorrow))
        #expect(Set(playlist.entries.map(\.asset)) == ["img0.jpg", "img1.jpg", "img2.png"])
        #expect(playlist.notes.contains { $0.hasPrefix("skipped cut.jpg: corrupt or truncated JPEG") })
        #expect(fixture.inconsistencies().isEmpty)
    }

    @Test func oldPlaylistsAndRenditionsLeaveWithTheRetentionWindow() throws {
        var fixture = try StagingFixture()
        fixture.options.day = .today
        var history: [CivilDate: [String]] = [:]
        for offset in 0..<8 {
            let now = fixture.now + .seconds(Int64(offset) * 86_400)
            let report = fixture.stage(now: now)
            #expect(report.outcome == .staged, "\(report.log)")
            let date = try #require(report.date)
            let assets = try #require(fixture.playlist(date)).entries.map(\.asset)
            // 6 assets, 4 a day, a 2-day window: at most 2 fresh, so the day says it is short.
            if offset > 0 { #expect(fixture.playlist(date)?.notes.first?.hasPrefix("library too small") == true) }
            history[date] = assets
        }
        let today = CivilDate("2026-11-30") ?? CivilDate(dayNumber: 0)
        #expect(fixture.playlistDates() == (0...3).map { today.adding(days: -3 + $0) })
        #expect(fixture.renditionFolders().count == 4)
        #expect(fixture.renditionFolders().allSatisfy { folder in fixture.playlistDates().contains { folder.hasPrefix($0.description) } })
        #expect(fixture.inconsistencies().isEmpty)
    }

    @Test func invalidOptionsAreNamed() throws {
        var fixture = try StagingFixture()
        fixture.options.zone = "Mars/Olympus"
        fixture.options.assetsPerDay = 9
        fixture.options.memoryCeiling = 10_000
        let report = fixture.stage()
        #expect(report.outcome == .failed)
        let line = report.log.joined()
        #expect(line.contains("timezone: unknown zone \"Mars/Olympus\""))
        #expect(line.contains("assets-per-day: expected 1 to 4 (the switch times), found 9"))
        #expect(line.contains("families: systemLarge: a 180x190 rendition needs 0.1 MiB, over the memory ceiling of 0.0 MiB"))
        #expect(fixture.playlistDates().isEmpty)
    }
}
