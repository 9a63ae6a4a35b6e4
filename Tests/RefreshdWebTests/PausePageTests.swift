import Foundation
import RefreshdTestSupport
import Testing

/// Issue 33: Pause and Resume on the dashboard, against a real `refreshd run --http` with a
/// token: the buttons, what the pages say while paused, and the actions' replies (the control
/// server's own `pause` / `resume`).
@Suite(.serialized) struct PausePageTests {
    static let token = "pause-token-0123456789"

    @Test func pauseAndResumeFromTheJobsPages() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/tick.yaml", Fixture.tick)
        try project.write("Jobs/feed.yaml", Fixture.template)
        try project.write("token", Self.token + "\n", mode: 0o600)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state,
                                 "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        let added = try Daemon.run(["ctl", "instance", "add", "web.feed", "alice", "--state", project.state])
        #expect(added.0 == 0, "\(added.1)")
        let bearer = ["Authorization: Bearer \(Self.token)"]

        // Not paused: a Pause button on a job's page and on a template's (alone there).
        #expect(HTTP.request(port, "/jobs/web.tick").text.contains("<form class=\"action\" method=\"post\" action=\"/api/jobs/web.tick/pause\"><button type=\"submit\">Pause</button></form>"))
        let template = HTTP.request(port, "/jobs/web.feed").text
        #expect(template.contains("action=\"/api/jobs/web.feed/pause\"") && !template.contains("/api/jobs/web.feed/run"))

        let paused = HTTP.request(port, "/api/jobs/web.tick/pause", method: "POST", headers: bearer)
        #expect(paused.status == 200 && HTTP.body(paused.text).contains("\"message\":\"paused web.tick: nothing of it launches until refreshd ctl resume web.tick"), "\(paused.text)")
        let page = HTTP.request(port, "/jobs/web.tick").text
        #expect(page.contains("<span class=\"outcome paused\">paused</span> since ") && page.contains("action=\"/api/jobs/web.tick/resume\"><button type=\"submit\">Resume</button>")
                && !page.contains("/api/jobs/web.tick/pause\""), "\(page)")
        #expect(HTTP.request(port, "/jobs").text.contains("<span class=\"outcome paused\">paused</span>"))
        let again = HTTP.request(port, "/api/jobs/web.tick/pause", method: "POST", headers: bearer)
        #expect(again.status == 409 && HTTP.body(again.text).contains("\"code\":\"already-paused\""), "\(again.text)")
        // Run now is a submit: kept, and it waits for the resume.
        let run = HTTP.request(port, "/api/jobs/web.tick/run", method: "POST", headers: bearer)
        #expect(run.status == 200, "\(run.text)")
        #expect(waitFor(timeout: 3) { HTTP.body(HTTP.request(port, "/api/jobs/web.tick").text).contains("\"nextPlace\":\"paused\"") })

        // A template's pause: its instance's page says so and offers no Resume of its own.
        #expect(HTTP.request(port, "/api/jobs/web.feed/pause", method: "POST", headers: bearer).status == 200)
        let instance = HTTP.request(port, "/jobs/web.feed%5Balice%5D").text
        #expect(instance.contains("paused with its template <a href=\"/jobs/web.feed\">web.feed</a>"), "\(instance)")

        let resumed = HTTP.request(port, "/api/jobs/web.tick/resume", method: "POST", headers: bearer)
        #expect(resumed.status == 200 && HTTP.body(resumed.text).contains("\"message\":\"resumed web.tick"), "\(resumed.text)")
        #expect(HTTP.request(port, "/jobs/web.tick").text.contains("action=\"/api/jobs/web.tick/pause\""))
        #expect(HTTP.request(port, "/api/jobs/web.feed/resume", method: "POST", headers: bearer).status == 200)
        let none = HTTP.request(port, "/api/jobs/web.feed/resume", method: "POST", headers: bearer)
        #expect(none.status == 409 && HTTP.body(none.text).contains("\"code\":\"not-paused\""), "\(none.text)")
    }
}
