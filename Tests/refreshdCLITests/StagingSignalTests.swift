import Foundation
import Testing

/// The real daemon with a staging run in the middle of a long decode (issue 20): SIGTERM stops
/// refreshd at once, the run is recorded interrupted, and no worker process is left.
@Suite(.serialized) struct StagingSignalTests {
    static func temporaries(_ folder: String) -> [String] {
        let walker = FileManager.default.enumerator(atPath: folder)
        var found: [String] = []
        while let path = walker?.nextObject() as? String {
            if (path as NSString).lastPathComponent.hasPrefix(".tmp-") { found.append(path) }
        }
        return found
    }

    @Test func sigtermDuringADecodeStopsTheDaemonAtOnceAndLeavesNoWorker() throws {
        let box = Sandbox()
        defer { box.remove() }
        try FileManager.default.createDirectory(atPath: box.root + "/library", withIntermediateDirectories: true)
        // 112 megapixels in a few KB: seconds of CPU for each family's decode.
        let made = try CLI.run(["staging", "blank-png", box.root + "/library/zeros.png", "--width", "16000", "--height", "7000"])
        #expect(made.status == 0, "\(made.stderr)")
        try box.write("stage.yaml", """
            identifier: test.stage
            kind: processing
            action: stage-playlist
            stage-playlist:
              library: \(box.root)/library
              switch-times: ["06:00"]
              timezone: UTC
              families: [systemSmall, systemMedium, systemLarge]
              widget: wallpaper
              day: today
            allowance: 10m
            grace: 30s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        // The first rendition's temporary file exists once its decode has begun.
        #expect(waitFor(timeout: 20) { !Self.temporaries(box.state + "/shared").isEmpty })
        let line = daemon.errors().split(separator: "\n").first { $0.contains("started in worker pid ") }
        let worker = line.flatMap { $0.split(separator: " ").last }.flatMap { Int32($0) }
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 5) == 0, "\(daemon.errors())")
        #expect(daemon.errors().contains("interrupted"), "\(daemon.errors())")
        if let worker { #expect(kill(worker, 0) != 0, "worker \(worker) outlived refreshd") } else { Issue.record("no worker pid logged") }
    }
}
