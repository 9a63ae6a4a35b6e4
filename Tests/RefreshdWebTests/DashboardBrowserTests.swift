import Foundation
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
        let activity = try Daemon.run(["ctl", "activity", "start", "web-pack", "--type", "Download", "--progress", "0.4",
                                       "--stale-date", "+30m", "--state", project.state])
        #expect(activity.0 == 0, "\(activity.1)")

        let screenshots = Self.repository + "/.build/dashboard-screenshots"
        try? FileManager.default.removeItem(atPath: screenshots)
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let outputFile = project.root + "/driver.json"
        let command = ["/usr/bin/python3", Self.repository + "/Tests/Browser/dashboard_check.py",
                       "http://127.0.0.1:\(port)", Self.token, screenshots, Daemon.binary, project.state,
                       "web.sleeper", "picture", "systemMedium", "web.feed"]
        let status = try Self.shell(command, output: outputFile, timeout: 120)
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
        #expect(Set(pages.keys) == ["overview", "jobs", "job", "widgets", "activities", "template", "simulate"], "\(text)")
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
        // The widget's rendition image was shown (decoded by the browser: natural width > 0).
        #expect(result["widgetImage"] as? Bool == true)
        #expect((result["screenshots"] as? [String])?.count == 9)
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
