import Foundation
import RefreshdTestSupport
import Testing

/// The Simulate page runs `refreshd simulate` of the jobs folder with the command's own code
/// (`JobsFolderSimulation`): the same report text, byte for byte, as the CLI for the same start
/// and seed; bounded (1-31 days, one at a time, stopped at its time or step limit); and the
/// scheduler stays on time while it runs.
@Suite(.serialized) struct SimulatePageTests {
    @Test func thePageShowsTheCommandsReportAndItsPicture() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/nightly.yaml", Fixture.nightly)
        try project.write("Jobs/sleeper.yaml", Fixture.sleeper)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")

        let start = "2026-12-01T00:00:00Z"
        let api = HTTP.request(port, "/api/simulate?days=3&seed=42&start=\(start)")
        #expect(api.status == 200, "\(api.text.prefix(400))")
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(HTTP.body(api.text).utf8))) as? [String: Any])
        let text = try #require(object["text"] as? String)
        // The CLI's report for the same folder, start, days and seed.
        let cli = try CLIOutput.run(["simulate", "--jobs", project.jobs, "--days", "3", "--seed", "42", "--start", start])
        #expect(cli.status == 0, "\(cli.errors)")
        #expect(cli.output == text + "\n", "page:\n\(text)\ncli:\n\(cli.output)")
        #expect(object["stopped"] == nil && (object["svg"] as? String)?.hasPrefix("<svg") == true)

        // The page: the form, the table (escaped), the picture from the kept result.
        let page = HTTP.request(port, "/simulate?days=3&seed=42&start=\(start)")
        #expect(page.status == 200 && page.text.contains("<pre class=\"report\">") && page.text.contains("web.nightly"))
        let svg = HTTP.request(port, "/simulate.svg?days=3&seed=42&start=2026-12-01T00%3A00%3A00.000Z")
        #expect(svg.status == 200 && svg.text.contains("Content-Type: image/svg+xml") && HTTP.body(svg.text).hasPrefix("<svg"))
        // Out of bounds: refused, naming the bound.
        let tooLong = HTTP.request(port, "/api/simulate?days=32")
        #expect(tooLong.status == 400 && tooLong.text.contains("1 to 31"), "\(tooLong.text.prefix(300))")
        #expect(HTTP.request(port, "/simulate?days=0").status == 400)
        #expect(HTTP.request(port, "/simulate").status == 200)
    }

    @Test func aLongSimulationStopsAtItsBoundOneAtATimeAndTheSchedulerStaysOnTime() throws {
        let project = Project()
        defer { project.remove() }
        // A 1 s job for 31 days: 2.7 million runs, far past the page's bounds.
        try project.write("Jobs/tick.yaml", Fixture.tick)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        let began = Date()
        let long = ResultBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { long.set(HTTP.request(port, "/api/simulate?days=31")) }
        usleep(2_000_000)
        // Another simulation meanwhile: refused at once; the pages are served. (On a loaded
        // machine the second may have started first: then the first is the one refused. Either
        // way exactly one runs, and it stops at its bound.)
        let other = HTTP.request(port, "/api/simulate?days=30")
        #expect(HTTP.request(port, "/healthz").status == 200)
        group.wait()
        let elapsed = Date().timeIntervalSince(began)
        let first = try #require(long.value)
        let (refused, ran) = other.status == 503 ? (other, first) : (first, other)
        #expect(refused.status == 503 && refused.text.contains("another simulation is running"), "\(refused.text.prefix(300))")
        #expect(ran.status == 200, "\(ran.text.prefix(300))")
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(HTTP.body(ran.text).utf8))) as? [String: Any])
        let stopped = object["stopped"] as? String ?? ""
        #expect(stopped.contains("simulated events") || stopped.contains("time bound"), "\(object["stopped"] ?? "not stopped")")
        #expect(elapsed < 25, "the simulation took \(elapsed) s")
        // The tick job's launches while the simulation ran.
        let api = HTTP.body(HTTP.request(port, "/api/jobs/web.tick").text)
        let runs = ((try? JSONSerialization.jsonObject(with: Data(api.utf8))) as? [String: Any])?["runs"] as? [[String: Any]] ?? []
        let since = Int64(began.timeIntervalSince1970 * 1000)
        let during = runs.compactMap { $0["run"] as? [String: Any] }.filter { (HostileRequestTests.milliseconds($0, "started") ?? 0) >= since }
        #expect(during.count >= 3, "\(api.prefix(300))")
        for run in during {
            let started = HostileRequestTests.milliseconds(run, "started") ?? 0, earliest = HostileRequestTests.milliseconds(run, "earliest") ?? 0
            #expect(started - earliest < 500, "run \(run["runID"] ?? "?") launched \(started - earliest) ms late")
        }
    }

    final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: (status: Int?, text: String)?
        func set(_ value: (status: Int?, text: String)) { lock.lock(); stored = value; lock.unlock() }
        var value: (status: Int?, text: String)? { lock.lock(); defer { lock.unlock() }; return stored }
    }
}

/// The built `refreshd` run to its end with its standard output captured.
enum CLIOutput {
    static func run(_ arguments: [String], timeout: Double = 60) throws -> (status: Int32, output: String, errors: String) {
        let daemon = try Daemon(arguments)
        defer { daemon.cleanUp() }
        let status = daemon.wait(timeout: timeout) ?? -1
        let output = (try? String(contentsOfFile: daemon.directory + "/stdout", encoding: .utf8)) ?? ""
        return (status, output, daemon.errors())
    }
}
