import Foundation
import Testing
@testable import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdStaging

/// The `stage-playlist` action from a job file, run by the real libuv loop on its worker pool:
/// the playlist and renditions appear in the shared container, and an expired run leaves it
/// consistent for the next one.
@Suite(.serialized) struct StagePlaylistLoopTests {
    /// A 1x1 RGBA PNG: renditions are upscaled from it, so a run is quick but real.
    static let dot = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==") ?? Data()

    /// A job staging today from a library of `images` dots under `root`.
    static func job(root: String, images: Int, allowance: String) throws -> JobConfig {
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        for i in 0..<images {
            #expect(FileManager.default.createFile(atPath: root + "/library/dot\(i).png", contents: dot))
        }
        let yaml = """
            identifier: t.stage
            kind: processing
            action: stage-playlist
            stage-playlist:
              library: library
              switch-times: ["06:00", "12:00", "18:00", "22:00"]
              timezone: UTC
              families: [systemSmall, systemMedium, systemLarge]
              widget: wallpaper
              day: today
            allowance: \(allowance)
            grace: 2s
            """
        return try JobDirectory.parse(yaml: yaml, file: root + "/Jobs/stage.yaml", projectRoot: root).get()
    }

    /// Problems a reader would see: playlists that do not parse or name missing renditions, and
    /// temporary files left behind.
    static func inconsistencies(_ shared: String) -> [String] {
        var problems: [String] = []
        let playlists = shared + "/wallpaper/playlists"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: playlists)) ?? [] where !name.hasPrefix(".tmp-") {
            guard let data = FileManager.default.contents(atPath: playlists + "/" + name),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let entries = object["entries"] as? [[String: Any]] else {
                problems.append("\(name) does not parse")
                continue
            }
            for entry in entries {
                for path in (entry["renditions"] as? [String: String] ?? [:]).values
                where !FileManager.default.fileExists(atPath: shared + "/" + path) {
                    problems.append("\(name) names missing \(path)")
                }
            }
        }
        let walker = FileManager.default.enumerator(atPath: shared)
        while let path = walker?.nextObject() as? String {
            if (path as NSString).lastPathComponent.hasPrefix(".tmp-") { problems.append("temporary file \(path)") }
        }
        return problems
    }

    /// Runs the job once on the harness's loop until its outcomes satisfy `done`, then stops it.
    static func run(_ config: JobConfig, on h: LoopHarness, until done: ([Outcome?]) -> Bool) throws {
        #expect(h.scheduler.register(config.definition, handler: config.spec.handler(actions: StagingActions.binding)))
        try h.scheduler.submit(TaskRequest(identifier: "t.stage", kind: .processing))
        h.start()
        #expect(h.wait(timeout: 30) { done(h.outcomes()["t.stage"] ?? []) })
        #expect(h.stop())
    }

    @Test func aJobFileStagesTodayIntoTheSharedContainer() throws {
        let h = try LoopHarness()
        defer { h.removeDirectory() }
        try Self.run(try Self.job(root: h.directory, images: 4, allowance: "30s"), on: h) { $0 == [.success] }
        let shared = h.directory + "/state/shared"
        let playlists = try FileManager.default.contentsOfDirectory(atPath: shared + "/wallpaper/playlists")
        #expect(playlists.count == 1 && playlists[0].hasSuffix(".json"))
        let folders = try FileManager.default.contentsOfDirectory(atPath: shared + "/wallpaper/renditions")
        #expect(folders.count == 1)
        let renditions = try FileManager.default.contentsOfDirectory(atPath: shared + "/wallpaper/renditions/" + folders[0])
        #expect(renditions.count == 12)   // 4 assets x 3 families
        #expect(Self.inconsistencies(shared).isEmpty, "\(Self.inconsistencies(shared))")
        #expect(h.lines.contains("staged "))
    }

    @Test func anExpiredRunLeavesTheContainerConsistentAndTheNextOneFinishes() throws {
        let h = try LoopHarness()
        defer { h.removeDirectory() }
        try Self.run(try Self.job(root: h.directory, images: 4, allowance: "1ms"), on: h) { $0.first == .expired }
        let shared = h.directory + "/state/shared"
        #expect(Self.inconsistencies(shared).isEmpty, "\(Self.inconsistencies(shared))")

        // The next run, with time enough, stages the day from where the expired one stopped.
        let again = try LoopHarness(directory: h.directory)
        try Self.run(try Self.job(root: h.directory, images: 0, allowance: "30s"), on: again) { $0.contains(.success) }
        #expect(Self.inconsistencies(shared).isEmpty, "\(Self.inconsistencies(shared))")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: shared + "/wallpaper/playlists")) ?? [])
            .filter { $0.hasSuffix(".json") }.count == 1)
    }
}
