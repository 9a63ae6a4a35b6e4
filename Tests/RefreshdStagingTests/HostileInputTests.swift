import Foundation
import RefreshdConfig
import RefreshdCore
import Synchronization
import Testing
@testable import RefreshdStaging

/// Files crafted against staging (issue 20): scan layouts that make libjpeg keep every
/// coefficient, sources too large to decode in time, planted symlinks, foreign files.
@Suite struct HostileInputTests {
    static func zeroPNG(_ path: String, width: Int, height: Int) throws {
        try SampleLibrary.writeBlankPNG(path: path, width: width, height: height)
    }

    /// A sequential (baseline) JPEG with one scan per component, Y first: libjpeg buffers every
    /// coefficient for it as for a progressive file. Its estimate counts that, so it is refused
    /// before decoding: cut in half, the file would fail as truncated if any scan were decoded.
    @Test func aSequentialJPEGWhoseFirstScanHasOneComponentIsRefusedBeforeDecoding() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("scans.jpg")
        try SampleLibrary.write(path: path, width: 1024, height: 1024, format: .jpeg, componentScans: true)
        let info = try RenditionRenderer.probe(path)
        #expect(!info.isProgressive && info.isMultiScan)
        // 4:2:0 sampling: 128x128 luma blocks + 2 x 64x64 chroma blocks, 128 bytes each.
        #expect(info.coefficientBytes == (128 * 128 + 2 * 64 * 64) * 128)

        let whole = try #require(FileManager.default.contents(atPath: path))
        let cut = try dir.write("cut.jpg", whole.prefix(whole.count / 2))
        for source in [path, cut] {
            do {
                try RenditionRenderer.render(source: source, to: dir.file("out.jpg"), width: 64, height: 64,
                                             memoryCeiling: 2 * 1_048_576)
                Issue.record("\(source): rendered over the ceiling")
            } catch {
                #expect(error.reason.contains("rendition 64x64 needs about 3.0 MiB "
                    + "(a JPEG whose first scan leaves out a component keeps all its coefficients), "
                    + "over the memory ceiling of 2.0 MiB"), "\(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.jpg")))
        }
        // The same picture with interleaved scans streams, and fits.
        let plain = dir.file("plain.jpg")
        try SampleLibrary.write(path: plain, width: 1024, height: 1024, format: .jpeg)
        #expect(try RenditionRenderer.probe(plain).coefficientBytes == 0)
        try RenditionRenderer.render(source: plain, to: dir.file("out.jpg"), width: 64, height: 64, memoryCeiling: 2 * 1_048_576)
    }

    /// A source over the pixel ceiling is refused from its header, naming the option.
    @Test func aSourceOverThePixelCeilingIsRefusedFromItsHeader() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("zeros.png")
        try Self.zeroPNG(path, width: 2000, height: 1000)
        do {
            try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 64, height: 64,
                                         memoryCeiling: 30 << 20, maxSourcePixels: 1_000_000)
            Issue.record("rendered over the pixel ceiling")
        } catch {
            #expect(error.reason == "source is 2000x1000 (2 megapixels), over the ceiling of 1000000 pixels "
                + "(max-source-pixels): decoding it would take too long")
        }
    }

    /// The expiration is asked inside a decode, every few rows, not only between files.
    @Test func anExpirationStopsADecodeInTheMiddle() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("zeros.png")
        try Self.zeroPNG(path, width: 200, height: 2000)
        let asked = Atomic<Int>(0)
        do {
            try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 64, height: 64,
                                         memoryCeiling: 30 << 20, isExpired: { asked.add(1, ordering: .relaxed).newValue > 3 })
            Issue.record("rendered after the expiration")
        } catch {
            #expect(error.isExpiration && error.reason == "the run expired while decoding")
        }
        #expect(asked.load(ordering: .relaxed) == 4)  // before the decode, then rows 0, 16, 32
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.jpg")))
    }

    /// A symlink planted at the temporary name an earlier refreshd used (`.tmp-NAME`) is not
    /// followed: temporary names are unpredictable and created with O_EXCL|O_NOFOLLOW.
    @Test func aSymlinkAtTheOldTemporaryNameIsNotFollowed() throws {
        let fixture = try StagingFixture()
        _ = fixture.stage()
        let victim = fixture.dir.file("victim.txt")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        var changed = fixture.options
        changed.seed = 7
        // The folder the changed run will write, planted with links at every old temporary name.
        let planted = try Self.plantOldTemporaryNames(fixture: fixture, options: changed, pointingAt: victim)
        #expect(planted > 0)
        let report = fixture.stage(changed)
        #expect(report.outcome == .staged, "\(report.log)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(fixture.inconsistencies().isEmpty)
    }

    /// Plants symlinks at `.tmp-NAME` for every rendition and playlist the run will write.
    static func plantOldTemporaryNames(fixture: StagingFixture, options: StageOptions,
                                       pointingAt victim: String) throws -> Int {
        // The manifest is the stager's; stage a copy of the library elsewhere to learn it.
        let scratch = TemporaryDirectory()
        _ = PlaylistStager(options: options).run(container: scratch.folder("c"), now: fixture.now, isExpired: { false })
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: scratch.file("c"))) ?? []
        var count = 0
        for relative in names where relative.hasSuffix(".jpg") || relative.hasSuffix(".json") {
            let target = fixture.container + "/" + (relative as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            let link = target + "/.tmp-" + (relative as NSString).lastPathComponent
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
            count += 1
        }
        return count
    }

    /// `SHARED/wallpaper` (or a folder below it) as a symlink to another folder: refused,
    /// naming it, and nothing is written or removed there.
    @Test func aSymlinkedContainerFolderIsRefusedByName() throws {
        for planted in ["wallpaper", "wallpaper/renditions", "wallpaper/playlists"] {
            let fixture = try StagingFixture()
            let elsewhere = fixture.dir.folder("elsewhere")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: elsewhere + "/2026-01-01.json"))
            try FileManager.default.createDirectory(atPath: elsewhere + "/old-folder", withIntermediateDirectories: true)
            let link = fixture.container + "/" + planted
            try FileManager.default.createDirectory(atPath: (link as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
            let report = fixture.stage()
            #expect(report.outcome == .failed)
            #expect(report.log.joined().contains("\(link): is a symlink; refusing to write through it"), "\(report.log)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).sorted() == ["2026-01-01.json", "old-folder"],
                    "\(planted)")
        }
    }

    /// The retention sweep removes what staging made and nothing else: a foreign playlist-like
    /// file, a foreign rendition-like folder, a foreign temporary-looking file and a foreign
    /// file inside one of staging's own folders all survive.
    @Test func theRetentionSweepSparesForeignFiles() throws {
        var fixture = try StagingFixture()
        fixture.options.day = .today
        let layout = fixture.layout
        try FileManager.default.createDirectory(atPath: layout.playlists, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: layout.renditions + "/2026-01-01-0000000000000000",
                                                withIntermediateDirectories: true)
        let foreign = [layout.playlists + "/2026-01-01.json", layout.playlists + "/.tmp-theirs",
                       layout.renditions + "/2026-01-01-0000000000000000/theirs.jpg"]
        for path in foreign { try Data("theirs".utf8).write(to: URL(fileURLWithPath: path)) }
        let first = fixture.stage()
        #expect(first.outcome == .staged, "\(first.log)")
        let firstFolder = try #require(fixture.renditionFolders().first { $0.hasPrefix("2026-11-23") })
        let intruder = layout.renditions + "/" + firstFolder + "/intruder.jpg"
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: intruder))
        for offset in 1..<6 {
            let report = fixture.stage(now: fixture.now + .seconds(Int64(offset) * 86_400))
            #expect(report.outcome == .staged, "\(report.log)")
        }
        for path in foreign + [intruder] {
            #expect(FileManager.default.fileExists(atPath: path), "\(path) was removed")
        }
        // staging's own old days went: four kept days, plus the foreign playlist.
        #expect(fixture.playlistDates().count == 5)
        #expect(!FileManager.default.fileExists(atPath: layout.playlistPath(CivilDate("2026-11-23")!)))
        // Its old folder kept only the intruder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.renditions + "/" + firstFolder) == ["intruder.jpg"])
    }

    /// A library entry that is a symlink to a file outside the library is refused by default,
    /// with the reason logged naming it; `library-symlinks: follow` uses it.
    @Test func aLibrarySymlinkOutOfTheLibraryIsRefusedUnlessAllowed() throws {
        var fixture = try StagingFixture(images: 2)
        let outside = try fixture.dir.image("outside.jpg", width: 320, height: 200, seed: 5)
        let link = fixture.library + "/linked.jpg"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: fixture.library + "/inside.jpg",
                                                   withDestinationPath: fixture.library + "/img0.jpg")
        fixture.options.assetsPerDay = 4
        let refused = fixture.stage()
        #expect(refused.outcome == .staged, "\(refused.log)")
        #expect(refused.log.contains("\(link): skipped: a symlink to \(outside), outside the library "
            + "(stage-playlist.library-symlinks: follow allows it)"), "\(refused.log)")
        #expect(Set(try #require(fixture.playlist(fixture.tomorrow)).entries.map(\.asset)) == ["img0.jpg", "img1.png", "inside.jpg"])

        fixture.options.librarySymlinks = .follow
        let followed = fixture.stage()
        #expect(followed.outcome == .staged, "\(followed.log)")
        #expect(try #require(fixture.playlist(fixture.tomorrow)).entries.contains { $0.asset == "linked.jpg" })
    }

    /// libjpeg reads every scan of a multi-scan file inside `start`, before the first row: its
    /// progress monitor asks the expiration there too.
    @Test func anExpirationStopsTheScansReadBeforeTheFirstRow() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("scans.jpg")
        try SampleLibrary.write(path: path, width: 1024, height: 1024, format: .jpeg, componentScans: true)
        let reader = try ScanlineSource(path: path)
        let asked = Atomic<Int>(0)
        let check: () -> Bool = { asked.add(1, ordering: .relaxed).newValue > 2 }
        reader.setStopCheck(check)
        defer { reader.setStopCheck(nil) }
        do {
            try reader.start(scaleNumerator: 1)
            Issue.record("start read every scan after the expiration")
        } catch {
            #expect(error.isExpiration, "\(error)")
        }
        #expect(asked.load(ordering: .relaxed) == 3)
    }

    /// A progressive file with hundreds of scans (each a pass over the image) is refused while
    /// its scans are read, naming the bound.
    @Test func aJPEGWithTooManyScansIsRefused() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("many.jpg")
        try SampleLibrary.write(path: path, width: 64, height: 64, format: .jpeg, manyScans: true)
        #expect(try RenditionRenderer.probe(path).isProgressive)
        do {
            try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 32, height: 32, memoryCeiling: 30 << 20)
            Issue.record("a file with 379 scans was decoded")
        } catch {
            #expect(error.reason == "cannot decode (libjpeg: more than 256 scans)", "\(error)")
        }
        // A file with a few scans (one per component) decodes.
        let usual = dir.file("usual.jpg")
        try SampleLibrary.write(path: usual, width: 64, height: 64, format: .jpeg, componentScans: true)
        try RenditionRenderer.render(source: usual, to: dir.file("out.jpg"), width: 32, height: 32, memoryCeiling: 30 << 20)
    }

    /// The playlist provider runs in refreshd's process: a playlist planted as a symlink (to a
    /// valid playlist elsewhere, or to /dev/zero, which would never end) or over the size bound
    /// is not read; the provider falls back to the last real one.
    @Test func plantedPlaylistsAreNotRead() throws {
        let fixture = try StagingFixture()
        #expect(fixture.stage().outcome == .staged)
        let staged = try #require(fixture.playlist(fixture.tomorrow))
        let provider = PlaylistTimeline(container: fixture.container, zone: "Europe/Paris")
        let later = try #require(ISO8601.parse("2026-11-25T11:30:00Z"))   // the 25th: not staged
        let dayAfter = fixture.layout.playlistPath(CivilDate("2026-11-25")!)

        // A valid playlist for the 25th, outside the container, linked in.
        var planted = staged
        planted.date = CivilDate("2026-11-25")!
        planted.entries = planted.entries.map { var e = $0; e.asset = "planted.jpg"; return e }
        let outside = try fixture.dir.write("outside.json", try JSONEncoder().encode(planted))
        try FileManager.default.createSymbolicLink(atPath: dayAfter, withDestinationPath: outside)
        #expect(try provider.timeline(for: .systemSmall, now: later).fallback == fixture.tomorrow)

        // The same playlist, padded past 4 MiB, as a real file.
        try FileManager.default.removeItem(atPath: dayAfter)
        var padded = try JSONEncoder().encode(planted)
        padded.append(Data(repeating: 0x20, count: 4 << 20))
        try padded.write(to: URL(fileURLWithPath: dayAfter))
        #expect(try provider.timeline(for: .systemSmall, now: later).fallback == fixture.tomorrow)

        // Without the padding it is today's playlist: the two above were refused for what they were.
        try FileManager.default.removeItem(atPath: dayAfter)
        try JSONEncoder().encode(planted).write(to: URL(fileURLWithPath: dayAfter))
        #expect(try provider.timeline(for: .systemSmall, now: later).fallback == nil)
    }

    /// With `library-symlinks: refuse`, an image is opened with O_NOFOLLOW: an entry swapped
    /// for a link after the library was listed is not read through it.
    @Test func anImageOpenedWithoutFollowingLinksRefusesALink() throws {
        let dir = TemporaryDirectory()
        let outside = try dir.image("outside.jpg", width: 64, height: 64)
        let link = dir.file("swapped.jpg")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        do {
            try RenditionRenderer.render(source: link, to: dir.file("out.jpg"), width: 32, height: 32,
                                         memoryCeiling: 30 << 20, followSymlinks: false)
            Issue.record("read through a link")
        } catch {
            #expect(error.reason == "is a symlink (it was not when the library was listed); not followed")
        }
        try RenditionRenderer.render(source: link, to: dir.file("out.jpg"), width: 32, height: 32, memoryCeiling: 30 << 20)
    }
}
