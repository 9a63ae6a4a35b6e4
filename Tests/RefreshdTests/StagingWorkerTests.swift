import Foundation
import Testing
@testable import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStaging

/// Staging against the real libuv scheduler with hostile input (issue 20): a long decode runs in
/// a worker process that the run's expiration and refreshd's stop end at once, and the shared
/// container's folders are never written through symlinks.
@Suite(.serialized) struct StagingWorkerTests {
    /// A 16000x7000 black PNG (a few KB, under the 120-megapixel ceiling): several seconds of
    /// CPU per family to decode.
    static func hugeLibrary(_ root: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        try SampleLibrary.writeBlankPNG(path: root + "/library/zeros.png", width: 16_000, height: 7_000)
    }

    static func job(root: String, allowance: String, grace: String) throws -> JobConfig {
        let yaml = """
            identifier: t.stage
            kind: processing
            action: stage-playlist
            stage-playlist:
              library: library
              switch-times: ["06:00"]
              timezone: UTC
              families: [systemSmall, systemMedium, systemLarge]
              widget: wallpaper
              day: today
            allowance: \(allowance)
            grace: \(grace)
            """
        return try JobDirectory.parse(yaml: yaml, file: root + "/Jobs/stage.yaml", projectRoot: root).get()
    }

    /// The worker's pid from the log line the host writes when it starts one.
    static func workerPID(_ h: LoopHarness) -> Int32? {
        guard let line = h.lines.all.first(where: { $0.contains("stage-playlist started in worker pid ") }),
              let pid = line.split(separator: " ").last.flatMap({ Int32($0) }) else { return nil }
        return pid
    }

    static func isAlive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }

    /// Temporary files left under the container.
    static func temporaries(_ shared: String) -> [String] {
        let walker = FileManager.default.enumerator(atPath: shared)
        var found: [String] = []
        while let path = walker?.nextObject() as? String {
            if (path as NSString).lastPathComponent.hasPrefix(".tmp-") { found.append(path) }
        }
        return found
    }

    /// The run's expiration stops the decode (SIGTERM to its worker), not the next file: the
    /// action itself reports its expiration within the grace (a body still decoding would be
    /// abandoned at the kill, saying nothing), the run ends `expired`, and the stop that
    /// follows does not wait on any decode.
    @Test func aLongDecodeEndsAtTheExpiration() throws {
        let h = try LoopHarness()
        defer { h.removeDirectory() }
        try Self.hugeLibrary(h.directory)
        let config = try Self.job(root: h.directory, allowance: "1s", grace: "2s")
        #expect(h.scheduler.register(config.definition, handler: config.spec.handler(actions: StagingActions.binding)))
        try h.scheduler.submit(TaskRequest(identifier: "t.stage", kind: .processing))
        h.start()
        #expect(h.wait(timeout: 20) { h.outcomes()["t.stage"] == [.expired] })
        let pid = Self.workerPID(h)
        #expect(pid != nil, "no worker started: \(h.lines.all)")
        // Ended by its worker at SIGTERM (reporting its expiration, or killed by it if it came
        // before the worker's handler), not abandoned at the kill with no exit at all.
        let run = try #require(h.runs().first)
        #expect(run.exitStatus == 1 || run.signal == SIGTERM, "\(run)")
        if run.exitStatus == 1 { #expect(h.lines.contains("expired while staging")) }
        #expect(h.stop(timeout: 5))
        if let pid { #expect(!Self.isAlive(pid)) }
        #expect(Self.temporaries(h.directory + "/state/shared").isEmpty)
    }

    /// refreshd's stop (what SIGTERM does) in the middle of a decode: the worker gets SIGTERM
    /// and the loop ends at once, not when the decode would have ended.
    @Test func theStopDoesNotWaitOnADecode() throws {
        let h = try LoopHarness()
        defer { h.removeDirectory() }
        try Self.hugeLibrary(h.directory)
        let config = try Self.job(root: h.directory, allowance: "10m", grace: "30s")
        #expect(h.scheduler.register(config.definition, handler: config.spec.handler(actions: StagingActions.binding)))
        try h.scheduler.submit(TaskRequest(identifier: "t.stage", kind: .processing))
        h.start()
        // The first rendition's temporary file exists once its decode has begun.
        #expect(h.wait(timeout: 20) { !Self.temporaries(h.directory + "/state/shared").isEmpty })
        #expect(h.stop(timeout: 5))
        #expect(Self.workerPID(h) != nil)
        #expect(h.outcomes()["t.stage"] == [.interrupted])
        if let pid = Self.workerPID(h) { #expect(!Self.isAlive(pid)) }
    }

    /// A publication into `SHARED/activities` when that folder is a symlink: refused, naming the
    /// folder, and nothing is written there. A symlink at the temporary name refreshd used to
    /// open (`.NAME.PID.tmp`) is not followed.
    @Test func publicationsDoNotFollowPlantedSymlinks() throws {
        let h = try LoopHarness()
        defer { h.removeDirectory() }
        let shared = h.directory + "/state/shared"
        let elsewhere = h.directory + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: shared + "/widgets", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: shared + "/activities", withDestinationPath: elsewhere)
        let victim = h.directory + "/victim.txt"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: shared + "/widgets/.k.json.\(getpid()).tmp", withDestinationPath: victim)
        h.start()
        h.scheduler.publish(Publication(path: "activities/a.json", contents: "{}"), in: shared)
        h.scheduler.publish(Publication(path: "widgets/k.json", contents: "{\"k\":1}"), in: shared)
        #expect(h.wait(timeout: 10) { h.lines.contains("not published: activities/a.json") })
        #expect(h.wait(timeout: 10) { FileManager.default.fileExists(atPath: shared + "/widgets/k.json") })
        #expect(h.stop())
        #expect(h.lines.contains("not published: activities/a.json: \(shared)/activities: is a symlink; refusing to write through it"),
                "\(h.lines.all)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    /// The worker limits its own address space before decoding: with a limit too small for the
    /// images it runs out of memory and dies there, while the same request with the action's
    /// own limit stages the day.
    @Test func theWorkerRunsUnderItsMemoryLimit() throws {
        let root = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        // One scan per component: libjpeg allocates every coefficient, 12 MB, within the 30 MiB
        // ceiling and far over a 1 MiB limit.
        try SampleLibrary.write(path: root + "/library/a.jpg", width: 2000, height: 2000, format: .jpeg, componentScans: true)
        var options = StageOptions(library: root + "/library", switchTimes: [ClockTime("06:00")].compactMap { $0 },
                                   zone: "UTC", assetsPerDay: 1, families: [RenditionSize.standard(.systemLarge)],
                                   widgetKind: "w")
        options.day = .today
        let worker = try #require(StagePlaylist.action(options).worker)
        let executable = try #require(ActionWorkerProcess.executable())
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        func run(limit: Int) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
            var request = ActionWorkerRequest(
                action: StagePlaylist.actionName, worker: worker,
                order: LaunchOrder(runID: 1, identifier: "t.stage", kind: .processing, started: now,
                                   deadline: now + .seconds(60), attempt: 1),
                sharedContainer: root + "/shared")
            request.memoryLimit = limit
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["action-worker", "--request", String(decoding: try JSONEncoder().encode(request), as: UTF8.self)]
            process.environment = ["SWIFT_BACKTRACE": "enable=no"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, process.terminationReason, output)
        }
        let starved = try run(limit: 1 << 20)
        #expect(starved.reason == .uncaughtSignal || starved.status != 0, "\(starved)")
        #expect(!starved.output.split(separator: "\n").contains { $0.hasPrefix("staged ") }, "\(starved.output)")
        #expect(starved.output.contains("Insufficient memory") || starved.reason == .uncaughtSignal, "\(starved.output)")
        let fed = try run(limit: worker.memoryLimit)
        #expect(fed.reason == .exit && fed.status == 0, "\(fed)")
        #expect(fed.output.split(separator: "\n").contains { $0.hasPrefix("staged ") }, "\(fed.output)")
    }
}
