import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig

@Suite struct StageBlockTests {
    static let good = """
        identifier: design.example.wallpaper.refresh
        kind: app-refresh
        timezone: Europe/Paris
        action: stage-playlist
        stage-playlist:
          library: .refreshd/library
          switch-times: ["06:00", "12:00", "18:00", "22:00"]
          assets-per-day: 3
          no-repeat-days: 5
          families:
            systemSmall:
            systemMedium: {points: 364x170, scale: 2}
          seed: 42
          widget: wallpaper
          retention-days: 9
          memory-ceiling: 20MiB
          day: today
          today-if-missing: true
          folder: walls
          quality: 80
          max-source-pixels: 50000000
          library-symlinks: follow
        allowance: 30s
        """

    /// The file with `line` (an option of the block) replaced, or added when `replacing` is nil.
    static func variant(_ line: String, replacing prefix: String?) -> String {
        var lines = good.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let prefix, let index = lines.firstIndex(where: { $0.hasPrefix("  " + prefix) }) {
            lines[index] = "  " + line
            while lines.indices.contains(index + 1), lines[index + 1].hasPrefix("    ") { lines.remove(at: index + 1) }
        } else {
            lines.insert("  " + line, at: 5)
        }
        return lines.joined(separator: "\n")
    }

    @Test func aGoodFileGivesEveryOption() throws {
        let config = try #require(TestSupport.config(Self.good))
        let action = try #require(config.action)
        #expect(action.name == "stage-playlist")
        #expect(config.command.isEmpty)
        #expect(config.spec.action == action)
        // Data only: the payload is the options as JSON, which the staging action decodes.
        let options = try JSONDecoder().decode(StageOptions.self, from: Data(action.payload.utf8))
        #expect(options.canonicalText == action.fingerprint)
        #expect(action.fingerprint == """
            library=/.refreshd/library
            folder=walls
            switch-times=06:00,12:00,18:00,22:00
            timezone=Europe/Paris
            assets-per-day=3
            no-repeat-days=5
            families=systemSmall 170.0x170.0@3.0,systemMedium 364.0x170.0@2.0
            seed=42
            widget=wallpaper
            retention-days=9
            memory-ceiling=20971520
            day=today
            today-if-missing=true
            quality=80
            max-source-pixels=50000000
            library-symlinks=follow
            """)
    }

    @Test func defaultsAndTheJobsZone() throws {
        let config = try #require(TestSupport.config("""
            identifier: a.b
            action: stage-playlist
            stage-playlist: {library: /srv/walls, switch-times: ["07:30"], families: [systemLarge], widget: w}
            """))
        let text = try #require(config.action?.fingerprint)
        #expect(text.contains("library=/srv/walls\n"))
        #expect(text.contains("timezone=Asia/Tokyo\n"))   // the machine's zone (no timezone:)
        #expect(text.contains("assets-per-day=1\n"))
        #expect(text.contains("families=systemLarge 360.0x379.0@3.0\n"))
        #expect(text.contains("day=tomorrow\n") && text.contains("memory-ceiling=31457280\n"))
        #expect(text.hasSuffix("max-source-pixels=120000000\nlibrary-symlinks=refuse"))
    }

    @Test func aChangedOptionIsAChangedJob() throws {
        let a = try #require(TestSupport.config(Self.good))
        let b = try #require(TestSupport.config(Self.variant("seed: 43", replacing: "seed:")))
        let same = try #require(TestSupport.config(Self.good))
        #expect(a.spec != b.spec)
        #expect(a.spec == same.spec)
    }

    @Test func relativeLibrariesResolveAgainstTheProjectRoot() throws {
        let result = JobDirectory.parse(yaml: Self.good, file: "/p/Jobs/x.yaml", projectRoot: "/p", searchPath: nil,
                                        now: TestSupport.now, timeZone: TestSupport.machineZone)
        let config = try result.get()
        #expect(config.action?.fingerprint.hasPrefix("library=/p/.refreshd/library\n") == true)
    }

    @Test(arguments: [
        ("library: \"\"", "library:", "stage-playlist.library: expected the path of a folder of images"),
        ("library: [a]", "library:", "stage-playlist.library: expected the path of a folder of images, found a list"),
        ("switch-times: []", "switch-times:", "stage-playlist.switch-times: expected a non-empty list of times"),
        ("switch-times: [\"25:00\"]", "switch-times:", "stage-playlist.switch-times: expected a time like 06:00 (00:00 to 23:59), found \"25:00\""),
        ("switch-times: [\"06:00\", \"6:00\"]", "switch-times:", "stage-playlist.switch-times: 06:00 is listed twice"),
        ("timezone: Mars/Olympus", nil, "stage-playlist.timezone: expected an IANA time zone"),
        ("assets-per-day: 5", "assets-per-day:", "stage-playlist.assets-per-day: expected 1 to 4 (the switch times), found 5"),
        ("assets-per-day: -1", "assets-per-day:", "stage-playlist.assets-per-day: expected a whole number 0 or greater"),
        ("no-repeat-days: seven", "no-repeat-days:", "stage-playlist.no-repeat-days: expected a whole number 0 or greater"),
        ("retention-days: 2", "retention-days:", "stage-playlist.retention-days: expected 5 (the no-repeat window"),
        ("families: []", "families:", "stage-playlist.families: expected a non-empty list of families"),
        ("families: [systemHuge]", "families:", "stage-playlist.families: expected one of systemSmall"),
        ("families: [systemSmall, systemSmall]", "families:", "stage-playlist.families: systemSmall is listed twice"),
        ("families: {systemSmall: {points: 0x10}}", "families:", "stage-playlist.families.systemSmall.points: expected a size in points"),
        ("families: {systemSmall: {points: 10x10, scale: -2}}", "families:", "stage-playlist.families.systemSmall.scale: expected a scale"),
        ("families: {systemSmall: {points: 10x10, sacle: 2}}", "families:", "unknown key \"sacle\" in stage-playlist.families.systemSmall (did you mean \"scale\"?)"),
        ("families: {systemSmall: {points: 16384x16384, scale: 2}}", "families:", "stage-playlist.families: systemSmall: expected 1 to 16384 pixels a side"),
        ("families: {systemLarge: {points: 2000x2000, scale: 3}}", "families:", "stage-playlist.families: systemLarge: a 6000x6000 rendition needs"),
        ("seed: -1", "seed:", "stage-playlist.seed: expected a whole number from 0 to 18446744073709551615"),
        ("seed: 18446744073709551616", "seed:", "stage-playlist.seed: expected a whole number"),
        ("widget: ../etc", "widget:", "stage-playlist.widget: expected 1 to 64 letters"),
        ("memory-ceiling: 30 MB", "memory-ceiling:", "stage-playlist.memory-ceiling: expected a size like 30MiB"),
        ("memory-ceiling: 9999999999GiB", "memory-ceiling:", "stage-playlist.memory-ceiling: expected a size like 30MiB"),
        ("memory-ceiling: 0", "memory-ceiling:", "stage-playlist.memory-ceiling: expected a size like 30MiB"),
        ("day: yesterday", "day:", "stage-playlist.day: expected one of tomorrow, today"),
        ("today-if-missing: maybe", "today-if-missing:", "stage-playlist.today-if-missing: expected true or false"),
        ("folder: ../up", "folder:", "stage-playlist.folder: expected one folder name (no '/', not hidden)"),
        ("quality: 101", "quality:", "stage-playlist.quality: expected 1 to 100, found 101"),
        ("max-source-pixels: many", "max-source-pixels:", "stage-playlist.max-source-pixels: expected a whole number 0 or greater"),
        ("max-source-pixels: 0", "max-source-pixels:", "stage-playlist.max-source-pixels: expected a positive number of pixels, found 0"),
        ("library-symlinks: sometimes", "library-symlinks:", "stage-playlist.library-symlinks: expected one of refuse, follow"),
        ("libary: x", nil, "unknown key \"libary\" in stage-playlist (did you mean \"library\"?)"),
    ] as [(String, String?, String)])
    func eachBadOptionIsALocatedError(line: String, replacing: String?, message: String) throws {
        let yaml = Self.variant(line, replacing: replacing)
        let error = try #require(TestSupport.onlyError(yaml), "\(yaml)")
        #expect(error.message.hasPrefix(message), "\(error)")
        #expect(error.file == "Jobs/test.yaml")
        // The error is on the option's line (an added option is line 6).
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLine = (lines.firstIndex { $0 == "  " + line } ?? -1) + 1
        #expect(error.line == expectedLine || (line.hasPrefix("families:") && error.line >= expectedLine), "\(error)")
    }

    @Test(arguments: [
        ("identifier: a.b\naction: stage-playlist", "action: stage-playlist needs a stage-playlist: block", "2:9"),
        ("identifier: a.b\naction: stage-playlist\ncommand: [true]\nstage-playlist: {library: l, switch-times: [\"06:00\"], families: [systemSmall], widget: w}",
         "action: replaces command:; expected one of them, found both", "2:9"),
        ("identifier: a.b\naction: fetch-feed", "action: expected one of stage-playlist, found \"fetch-feed\"", "2:9"),
        ("identifier: a.b\ncommand: [true]\nstage-playlist: {library: l}", "stage-playlist: applies only to action: stage-playlist", "3:1"),
        ("identifier: a.b\naction: stage-playlist\nstage-playlist: {switch-times: [\"06:00\"], families: [systemSmall], widget: w}",
         "stage-playlist: missing required key \"library\"", "3:17"),
        ("identifier: a.b\naction: stage-playlist\nstage-playlist: [library]", "stage-playlist: expected a mapping like", "3:17"),
        ("identifier: a.b", "missing required key \"command\" (expected a list like [\"Scripts/refresh\", \"--flag\"], or action: stage-playlist)", "1:1"),
    ])
    func actionAndCommandRules(yaml: String, message: String, position: String) throws {
        let error = try #require(TestSupport.onlyError(yaml))
        #expect(error.message.hasPrefix(message), "\(error)")
        #expect(error.position == position, "\(error)")
    }

    @Test func aTimelineCannotNameAnAction() {
        let errors = TestSupport.errors("""
            identifier: a.b
            kind: timeline
            provider: playlist
            widget: {kind: w, families: [systemSmall]}
            action: stage-playlist
            stage-playlist: {library: l, switch-times: ["06:00"], families: [systemSmall], widget: w}
            """)
        #expect(errors.contains { $0.message.hasPrefix("action: applies to app-refresh and processing jobs") })
    }

    @Test(arguments: [
        "library: \"a\\0b\"", "switch-times: [\"06:00\\0\"]", "widget: \"w\\0\"",
        "families: {systemSmall: {points: \"1e400x1\"}}", "families: {systemSmall: {points: NaNxNaN}}",
        "families: {systemSmall: {scale: .inf}}", "families: {systemSmall: {points: 99999999999999999999x1}}",
        "memory-ceiling: 99999999999999999999999", "memory-ceiling: \"-1MiB\"", "seed: 0x10",
        "assets-per-day: 99999999999999999999", "switch-times: [[\"06:00\"]]", "families: {? [a] : b}",
        "library: " + String(repeating: "x", count: 5000),
    ])
    func hostileValuesAreErrorsNotCrashes(line: String) {
        let errors = TestSupport.errors(Self.variant(line, replacing: String(line.prefix { $0 != ":" }) + ":"))
        #expect(!errors.isEmpty)
        #expect(errors.allSatisfy { $0.line >= 1 && $0.column >= 1 })
    }
}
