import Foundation
import RefreshdTestSupport
import Testing

/// The Simulate page's replay (issue 34, item 3): a real `refreshd run --http` records a few
/// seconds; `/api/replay` and `/simulate/replay` answer with the command line's own replay
/// (the same table, byte for byte, as `simulate --replay` of that period), a what-if folder
/// needs the token and must lie under the folder that holds the jobs folder, and the page
/// works in Chromium at 1400 px and 390 px (`Tests/Browser/replay_check.py`).
@Suite(.serialized) struct ReplayPageTests {
    static let token = "replay-token-0123456789"

    /// The tick job every second; `Jobs-next` has it every 2 s; `escape` links to /etc.
    static func project() throws -> Project {
        let project = Project()
        try project.write("Jobs/tick.yaml", Fixture.tick)
        try project.write("Jobs-next/tick.yaml", Fixture.tick.replacingOccurrences(of: "resubmit: {after: 1s}", with: "resubmit: {after: 2s}"))
        try project.write("token", token + "\n", mode: 0o600)
        try FileManager.default.createSymbolicLink(atPath: project.root + "/escape", withDestinationPath: "/etc")
        return project
    }

    /// refreshd run with the dashboard for about 5 s: the daemon, its port and the period
    /// recorded (`from=...&to=...`), ended a second before it is returned (every run in it ended).
    static func recorded(_ project: Project) throws -> (Daemon, Int, String, String) {
        let from = Date()
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state,
                                 "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        guard let port = daemon.dashboardPort() else {
            daemon.cleanUp()
            throw POSIXError(.ETIMEDOUT)
        }
        usleep(5_000_000)
        let to = Date()
        usleep(1_000_000)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (daemon, port, iso.string(from: from), iso.string(from: to))
    }

    static func object(_ response: (status: Int?, text: String)) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(HTTP.body(response.text).utf8))) as? [String: Any] ?? [:]
    }

    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    @Test func theAPIAnswersWithTheCommandLinesReplayAndAWhatIfNeedsTheTokenAndAnAllowedFolder() throws {
        let project = try Self.project()
        defer { project.remove() }
        let (daemon, port, from, to) = try Self.recorded(project)
        defer { daemon.cleanUp() }
        let period = "from=\(from)&to=\(to)"
        let bearer = ["Authorization: Bearer \(Self.token)"]

        // The replay alone: read-only, the command line's table for the same period.
        let alone = HTTP.request(port, "/api/replay?\(period)")
        #expect(alone.status == 200, "\(alone.text.prefix(400))")
        let object = Self.object(alone)
        let text = try #require(object["text"] as? String)
        let cli = try CLIOutput.run(["simulate", "--replay", "\(from)..\(to)", "--state", project.state, "--ran-jobs", project.jobs])
        #expect(cli.output.hasPrefix(text + "\n"), "page:\n\(text)\ncli:\n\(cli.output)\n\(cli.errors)")
        let error = object["error"] as? [String: Any] ?? [:]
        #expect((error["ranRuns"] as? Int ?? 0) >= 3 && object["whatIfJobs"] == nil, "\(error)")
        #expect((object["svg"] as? String)?.contains("web.tick · replayed") == true)

        // The what-if: refused without the token, done with it, the command line's again.
        let next = Self.realPath(project.root + "/Jobs-next")
        #expect(HTTP.request(port, "/api/replay?\(period)&jobs=Jobs-next").status == 401)
        #expect(HTTP.request(port, "/api/replay?\(period)&jobs=Jobs-next", headers: ["Authorization: Bearer \(String(repeating: "x", count: 23))"]).status == 403)
        let whatIf = HTTP.request(port, "/api/replay?\(period)&jobs=Jobs-next", headers: bearer)
        #expect(whatIf.status == 200, "\(whatIf.text.prefix(400))")
        let w = Self.object(whatIf)
        #expect(w["whatIfJobs"] as? String == next)
        let tick = (w["jobs"] as? [[String: Any]] ?? []).first { $0["job"] as? String == "web.tick" } ?? [:]
        let launched = { (side: String) in (tick[side] as? [String: Any])?["launched"] as? Int ?? -1 }
        #expect(launched("whatIf") >= 1 && launched("whatIf") < launched("replayed"), "\(tick)")
        let cliWhatIf = try CLIOutput.run(["simulate", "--replay", "\(from)..\(to)", "--state", project.state, "--ran-jobs", project.jobs,
                                           "--jobs", next])
        #expect(cliWhatIf.output.hasPrefix((w["text"] as? String ?? "-") + "\n"), "\(w["text"] ?? "")\ncli:\n\(cliWhatIf.output)")

        // Folders outside the allowed place, or not folders: refused, saying why.
        for (jobs, words) in [("../x", "goes up with “..”"), ("/etc", "outside the allowed place"), ("escape", "outside the allowed place"),
                              ("missing", "there is no folder at"), ("Jobs-next/tick.yaml", "is not a folder"),
                              ("Jobs-next%00", "without control characters")] {
            let refused = HTTP.request(port, "/api/replay?\(period)&jobs=\(jobs)", headers: bearer)
            #expect(refused.status == 400 && refused.text.contains(words) && refused.text.contains("expected a folder under"),
                    "\(jobs): \(refused.text.prefix(400))")
        }
        // Periods out of bounds.
        for (query, words) in [("from=\(to)&to=\(from)", "is empty"), ("from=40d", "at most 31 days"), ("from=yesterday", "from: expected"),
                               ("to=1h", "needs ?from="), ("from=1h&seed=-1", "seed: expected")] {
            let refused = HTTP.request(port, "/api/replay?\(query)")
            #expect(refused.status == 400 && refused.text.contains(words), "\(query): \(refused.text.prefix(400))")
        }
        #expect(HTTP.request(port, "/api/replay?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z").status == 404)

        // The page: the form by default on the last day; the tables and the picture inline.
        let form = HTTP.request(port, "/simulate/replay")
        #expect(form.status == 200 && form.text.contains("<form class=\"simulate replay\"") && form.text.contains("data-keep"))
        let page = HTTP.request(port, "/simulate/replay?\(period)")
        #expect(page.status == 200 && page.text.contains("id=\"replay-jobs\"") && page.text.contains("<svg ")
                && page.text.contains("web.tick · ran"), "\(page.text.prefix(600))")
        let refusedPage = HTTP.request(port, "/simulate/replay?\(period)&jobs=Jobs-next")
        #expect(refusedPage.status == 401 && refusedPage.text.contains("needs the bearer token"), "\(refusedPage.text.prefix(300))")
        let badPage = HTTP.request(port, "/simulate/replay?from=%3Cb%3E")
        #expect(badPage.status == 400 && badPage.text.contains("&lt;b&gt;") && !badPage.text.contains("<b>"), "\(badPage.text.prefix(300))")
        #expect(HTTP.request(port, "/simulate").text.contains("href=\"/simulate/replay\""))
    }

    @Test(.enabled(if: DashboardBrowserTests.browserAvailable, "chromium and chromium-driver are not installed (Scripts/bootstrap installs them)"))
    func theReplayAndAWhatIfWorkInChromiumAt1400And390Pixels() throws {
        let project = try Self.project()
        defer { project.remove() }
        let (daemon, port, from, to) = try Self.recorded(project)
        defer { daemon.cleanUp() }
        let shots = DashboardBrowserTests.repository + "/.build/dashboard-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let output = project.root + "/replay.json"
        let query = "from=\(from)&to=\(to)"
        let status = try DashboardBrowserTests.shell(["/usr/bin/python3", DashboardBrowserTests.repository + "/Tests/Browser/replay_check.py",
                                                      "http://127.0.0.1:\(port)", Self.token, shots, query, "Jobs-next"],
                                                     output: output, timeout: 120)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        #expect(status == 0, "\(text) \(errors)")
        let result = try #require((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any], "\(text) \(errors)")
        // The replay alone by a plain form (no script needed), then the what-if sent with the
        // token by the page's script, at each width: the table with its columns, the picture.
        for width in ["1400", "390"] {
            let r = result[width] as? [String: Any] ?? [:]
            #expect(r["aloneHeads"] as? [String] == ["job", "as it ran", "replayed"], "\(width): \(r)")
            #expect(r["whatIfHeads"] as? [String] == ["job", "as it ran", "replayed", "what if"], "\(width): \(r)")
            #expect((r["lanes"] as? Int ?? 0) >= 3, "\(width): \(r)")
            // The page never scrolls sideways; the picture scrolls in its own box on a phone.
            let page = r["page"] as? [Int] ?? []
            #expect(page.count == 2 && page[0] <= page[1], "\(width): the page is \(page) px wide")
            if width == "390" { #expect(r["pictureScrolls"] as? Bool == true, "\(r)") }
        }
        // Without a token (the prompt cancelled): said, and nothing sent.
        #expect((result["noToken"] as? String ?? "").contains("no token given"), "\(result)")
        #expect((result["console"] as? [String: Any] ?? [:]).isEmpty, "\(result["console"] ?? "")")
    }
}
