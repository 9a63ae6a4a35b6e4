import Foundation
import RefreshdTestSupport
import Testing

/// The dashboard in a real browser: Debian's chromium, headless, driven by python3-selenium
/// through chromium-driver (`Tests/Browser/dashboard_check.py`), against a real
/// `refreshd run --http` with a token file. Screenshots of every page are kept in
/// `.build/dashboard-screenshots/` (README's come from there).
@Suite(.serialized) struct DashboardBrowserTests {
    static let token = "test-token-0123456789abcdef"

    static var repository: String {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.path + "/Package.swift") { return url.path }
        }
        return FileManager.default.currentDirectoryPath
    }

    static var browserAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
    }

    /// A project with a widget showing a PNG, a job that runs 3 s, a failing job, a calendar job.
    static func project() throws -> Project {
        let project = Project()
        try project.write("provider.sh", Fixture.provider(rendition: "pictures/check.png"), mode: 0o755)
        try FileManager.default.createDirectory(atPath: project.state + "/shared/pictures", withIntermediateDirectories: true)
        try Fixture.png.write(to: URL(fileURLWithPath: project.state + "/shared/pictures/check.png"))
        try project.write("Jobs/picture.yaml", Fixture.widgetJob(project.root + "/provider.sh"))
        try project.write("Jobs/sleeper.yaml", Fixture.sleeper)
        // Its failure notification goes to a receiver that is down: held, retried.
        try project.write("Jobs/failing.yaml", Fixture.failing + "\non-failure: {webhook: \"http://127.0.0.1:9/hook\", timeout: 1s}\n")
        try project.write("Jobs/feed.yaml", Fixture.template)
        try project.write("Jobs/nightly.yaml", Fixture.nightly)
        try project.write("token", token + "\n", mode: 0o600)
        return project
    }

    @Test(.enabled(if: browserAvailable, "chromium and chromium-driver are not installed (Scripts/bootstrap installs them)"))
    func everyPageLiveUpdatesActionsAndTheWidgetImageInChromium() throws {
        let project = try Self.project()
        defer { project.remove() }
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state,
                                 "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        // The failing job has failed once and the widget shows its picture before the browser looks.
        #expect(waitFor(timeout: 15) {
            let overview = HTTP.request(port, "/api/overview").text
            let widgets = HTTP.request(port, "/api/widgets").text
            return overview.contains("\"web.failing\"") && widgets.contains("pictures/check.png")
        }, "\(daemon.errors())")

        // A template's instances (bob fails), for its page.
        for key in ["alice", "bob", "carol"] {
            let added = try Daemon.run(["ctl", "instance", "add", "web.feed", key, "--state", project.state])
            #expect(added.0 == 0, "\(added.1)")
        }
        #expect(waitFor(timeout: 10) { HTTP.request(port, "/api/jobs/web.feed").text.contains("\"web.feed[bob]\"") })

        // A live activity, for the activities page (ended from the page's API below).
        // Two: one ended through the API, one whose End button the operator checks use.
        for id in ["web-pack", "web-pack-2"] {
            let activity = try Daemon.run(["ctl", "activity", "start", id, "--type", "Download", "--progress", "0.4",
                                           "--stale-date", "+30m", "--state", project.state])
            #expect(activity.0 == 0, "\(activity.1)")
        }

        // Pages as a plain client reads them (no browser needed).
        let template = HTTP.request(port, "/jobs/web.feed").text
        #expect(template.contains("/api/jobs/web.feed/instances") && !template.contains("/api/jobs/web.feed/run")
                && !template.contains("/api/jobs/web.feed/expire"), "a template offers actions the API refuses")
        #expect(HTTP.request(port, "/jobs/web.feed%5Balice%5D").text.contains(" -c echo feed for alice; test alice != bob</code>"),
                "an instance's page shows its command filled")
        #expect(waitFor(timeout: 10) {
            let jobs = HTTP.request(port, "/jobs").text
            return jobs.contains("template · 3 instances") && jobs.contains("1 failing")
        }, "the template's row counts its instances: \(HTTP.request(port, "/jobs").text)")
        let jobsPage = HTTP.request(port, "/jobs").text
        #expect(jobsPage.contains("<span class=\"muted\">timeline</span>"))
        let sleeperPage = HTTP.request(port, "/jobs/web.sleeper").text
        #expect(!sleeperPage.contains("Since this refreshd started"), "a job's page shows every job's notification counts")
        #expect(sleeperPage.contains("Actions need the token"))
        let picture = HTTP.request(port, "/overview.svg").text
        #expect(picture.contains(">web.feed[*]</text>") && !picture.contains("web.feed[alice]") && picture.contains(":00</text>")
                && !picture.contains("seed") && !picture.contains("invariants"), "\(picture.prefix(600))")
        // Without JavaScript a button posts a plain form: refused (no token), sent back to its
        // page, which says so, rather than showing raw JSON.
        let plain = HTTP.request(port, "/api/jobs/web.sleeper/run", method: "POST",
                                 headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: text/html,application/xhtml+xml"])
        #expect(plain.status == 303 && plain.text.contains("Location: /jobs/web.sleeper?refused=no-token"), "\(plain.text.prefix(300))")
        let told = HTTP.request(port, "/jobs/web.sleeper?refused=no-token").text
        #expect(told.contains("class=\"message refused\"><span>Not done: actions need the bearer token"))
        #expect(!HTTP.request(port, "/jobs/web.sleeper?refused=%3Cb%3Eyou+won%3C%2Fb%3E").text.contains("message refused"))
        // An API client without a token still gets 401 and the JSON reply.
        #expect(HTTP.request(port, "/api/jobs/web.sleeper/run", method: "POST").status == 401)

        let screenshots = Self.repository + "/.build/dashboard-screenshots"
        try? FileManager.default.removeItem(atPath: screenshots)
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let outputFile = project.root + "/driver.json"
        let command = ["/usr/bin/python3", Self.repository + "/Tests/Browser/dashboard_check.py",
                       "http://127.0.0.1:\(port)", Self.token, screenshots, Daemon.binary, project.state,
                       "web.sleeper", "picture", "systemMedium", "web.feed", String(daemon.pid)]
        let status = try Self.shell(command, output: outputFile, timeout: 240)
        let text = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        // Kept beside the screenshots: what the browser saw, for a person to read.
        try? text.write(toFile: screenshots + "/driver.json", atomically: true, encoding: .utf8)
        let parsed = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        let errors = (try? String(contentsOfFile: outputFile + ".err", encoding: .utf8)) ?? ""
        let result = try #require(parsed, "driver said: \(text) \(errors)")
        if status == 3 {
            Issue.record("the browser could not be driven: \(result["missing"] ?? text)")
            return
        }
        #expect(status == 0, "\(text)")

        // Every page loaded, connected to the event stream, and logged no console error.
        let pages = result["pages"] as? [String: [String: Any]] ?? [:]
        #expect(Set(pages.keys) == ["overview", "jobs", "job", "widgets", "activities", "template", "simulate", "failures"], "\(text)")
        for (name, page) in pages {
            #expect(page["live"] as? Bool == true, "\(name) did not connect to /api/events: \(page)")
        }
        #expect(pages["overview"]?["picture"] as? Bool == true, "the 24 h picture did not load")
        #expect(pages["job"]?["h1"] as? String == "web.sleeper")
        // The failing job's notification waits on the overview (its receiver is down).
        #expect((pages["overview"]?["heldNotifications"] as? Int ?? 0) >= 1, "\(pages["overview"] ?? [:])")
        // The template's page: its instances folded, bob failing.
        #expect(pages["template"]?["instances"] as? Int == 3, "\(pages["template"] ?? [:])")
        #expect((pages["template"]?["count"] as? String)?.hasPrefix("Instances: 3") == true, "\(pages["template"] ?? [:])")
        #expect(pages["template"]?["failingInstances"] as? [String] == ["web.feed[bob]"], "\(pages["template"] ?? [:])")
        // The Simulate page ran `simulate` on the jobs folder: its table and its picture.
        #expect(pages["simulate"]?["picture"] as? Bool == true, "\(pages["simulate"] ?? [:])")
        #expect((pages["simulate"]?["report"] as? String)?.contains("web.sleeper") == true, "\(pages["simulate"] ?? [:])")
        #expect((result["errors"] as? [String])?.isEmpty == true, "console errors: \(result["errors"] ?? "")")
        // A run started with `refreshd ctl` is on the open overview within 1 s, without a reload.
        let live = result["liveRun"] as? [String: Any] ?? [:]
        #expect(live["seen"] as? Bool == true && (live["seconds"] as? Double ?? 9) <= 1.0, "\(live); ctl: \(result["ctl"] ?? "")")
        #expect(live["notReloaded"] as? Bool == true)
        // Actions: 401 without a token, 403 with a wrong one; the page's button with the token
        // submits the job; a reload with the token is done.
        let actions = result["actions"] as? [String: Any] ?? [:]
        #expect(actions["none"] as? Int == 401 && actions["wrong"] as? Int == 403, "\(actions)")
        #expect((actions["button"] as? String)?.hasPrefix("submitted web.sleeper") == true, "\(actions)")
        #expect((actions["reload"] as? [Any])?.first as? Int == 200, "\(actions)")
        #expect((actions["end"] as? [Any])?.first as? Int == 200, "\(actions)")
        // An instance added from the template's page with the token, and removed from it.
        #expect(actions["instanceAdded"] as? Bool == true && actions["instanceRemoved"] as? Bool == true, "\(actions)")
        // The Failures page (issue 33): the failing job and the failing instance have no retry
        // left; Retry now on one, then Retry all, asked first: dismissed sends nothing.
        #expect(Set(pages["failures"]?["exhausted"] as? [String] ?? []) == ["web.failing", "web.feed[bob]"], "\(pages["failures"] ?? [:])")
        let failures = result["failures"] as? [String: Any] ?? [:]
        #expect((failures["one"] as? String)?.hasPrefix("submitted web.failing earliest ") == true, "\(failures)")
        #expect((failures["confirm"] as? String)?.hasPrefix("Retry all 2 exhausted jobs now?") == true, "\(failures)")
        #expect(failures["dismissed"] as? String == "Retry all 2 now: not sent (cancelled).", "\(failures)")
        #expect(failures["bulk"] as? String == "submitted 2 of 2 now", "\(failures)")
        // The widget's rendition image was shown (decoded by the browser: natural width > 0).
        #expect(result["widgetImage"] as? Bool == true)
        #expect((result["screenshots"] as? [String])?.count == 12)

        // Live updates leave the operator alone (issue 33).
        let checks = result["operator"] as? [String: Any] ?? [:]
        let typed = checks["typed"] as? [String: Any] ?? [:]
        #expect((typed["events"] as? Int ?? 0) >= 20 && typed["value"] as? String == "half-typ" && typed["focused"] as? Bool == true,
                "a half-typed key did not survive 20 events: \(typed)")
        let widgets = checks["widgets"] as? [String: Any] ?? [:]
        #expect((widgets["events"] as? Int ?? 0) >= 20 && widgets["open"] as? Bool == true, "an open <details> closed: \(widgets)")
        #expect((widgets["message"] as? String)?.isEmpty == false && widgets["after5s"] as? String == widgets["message"] as? String,
                "the reload's result did not stay: \(widgets)")
        let activities = checks["activities"] as? [String: Any] ?? [:]
        #expect((activities["message"] as? String)?.contains("does not match") == true
                && activities["after5s"] as? String == activities["message"] as? String, "\(activities)")
        #expect((checks["cancelled"] as? String)?.contains("no token given") == true, "\(checks["cancelled"] ?? "")")
        let job = checks["job"] as? [String: Any] ?? [:]
        #expect((job["message"] as? String)?.isEmpty == false && job["after5s"] as? String == job["message"] as? String
                && job["dismissed"] as? Bool == true, "\(job)")
        // Search (issue 33, item 5): what is typed stays through 20 events, with the focus; the
        // GET form finds bob; 63 instances page both ways with their position; runs by outcome.
        let search = checks["search"] as? [String: Any] ?? [:]
        let typedSearch = search["typed"] as? [String: Any] ?? [:]
        #expect((typedSearch["events"] as? Int ?? 0) >= 20 && typedSearch["value"] as? String == "bo" && typedSearch["focused"] as? Bool == true,
                "a half-typed search did not survive 20 events: \(search)")
        #expect(search["found"] as? [String] == ["web.feed[bob]"] && search["foundPosition"] as? String == "1-1 of 1"
                && search["kept"] as? String == "bo", "\(search)")
        #expect(search["first"] as? String == "1-50 of 63" && search["next"] as? String == "51-63 of 63" && search["nextRows"] as? Int == 13
                && search["previous"] as? String == "1-50 of 63", "\(search)")
        let failedRuns = search["failedRuns"] as? [String] ?? []
        #expect(!failedRuns.isEmpty && failedRuns.allSatisfy { !["success", "running"].contains($0) }, "\(search)")
        // Every page fits 1400 px and 390 px: the page never scrolls sideways.
        let widths = checks["widths"] as? [String: [Int]] ?? [:]
        #expect(widths.count == 30, "\(widths)")
        for (page, pair) in widths.sorted(by: { $0.key < $1.key }) {
            #expect(pair.count == 2 && pair[0] <= pair[1], "\(page): the page is \(pair.first ?? 0) px wide in a \(pair.last ?? 0) px window")
        }
        // refreshd stopped: a banner says so, and the countdowns stop.
        let down = checks["down"] as? [String: Any] ?? [:]
        #expect(down["banner"] as? Bool == true && down["tickedWhileUp"] as? Bool == true && down["frozen"] as? Bool == true, "\(down)")
    }

    /// Runs a command with stdout to `output`; returns its exit status.
    static func shell(_ argv: [String], output: String, timeout: Double) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, output + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in cEnv { free(e) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        let end = Date().addingTimeInterval(timeout)
        var raw: Int32 = 0
        while Date() < end {
            if waitpid(pid, &raw, WNOHANG) == pid { return (raw >> 8) & 0xff }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &raw, 0)
        return -1
    }
}
