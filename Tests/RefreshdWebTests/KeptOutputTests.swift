import Foundation
import RefreshdTestSupport
import Testing

/// Issue 33, item 2: a failed run's output and results lines are kept in the store with the
/// run, so they are still shown after 1,000 other runs and a restart: in `status --runs` (a few
/// last lines in text, the whole kept tail in --json), on the job's page and in the API. (The
/// dashboard used to keep them in memory for the latest 300 runs, lost at a restart.)
@Suite(.serialized) struct KeptOutputTests {
    /// 150 lines on stdout (within the output rate limit of 200 lines a second), a results
    /// line, then the error on stderr, and exit 2.
    static let script = """
        #!/bin/sh
        i=1
        while [ $i -le 150 ]; do echo "progress $i"; i=$((i+1)); done
        echo '{"note": "half done"}' >&3
        sleep 0.3
        echo 'fatal: disk full' >&2
        exit 2
        """

    /// Runs `refreshd ARGUMENTS` to its end: its standard output.
    func stdout(_ arguments: [String]) throws -> String {
        let cli = try Daemon(arguments)
        defer { cli.cleanUp() }
        _ = cli.wait(timeout: 30)
        return (try? String(contentsOfFile: cli.directory + "/stdout", encoding: .utf8)) ?? ""
    }

    func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// The newest run of the state (`status --json --runs 1`), when there is one.
    func newest(_ project: Project) throws -> [String: Any]? {
        (json(try stdout(["status", "--state", project.state, "--json", "--runs", "1"]))?["runs"] as? [[String: Any]])?.first
    }

    @Test func aFailedRunsOutputIsShownAfterAThousandOtherRunsAndARestart() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("fail.sh", Self.script, mode: 0o755)
        try project.write("Jobs/failing.yaml", """
            identifier: web.failing
            kind: processing
            command: ["\(project.root)/fail.sh"]
            retry: {initial: 1h}
            """)
        let arguments = ["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0",
                         "--keep-output", "100", "--max-concurrent", "32"]
        let first = try Daemon(arguments)
        defer { first.cleanUp() }
        #expect(waitFor(timeout: 30) { (try? newest(project))?["outcome"] as? String == "failure" }, "\(first.errors())")

        // 1,000 other runs: a template's instances, each run once.
        try project.write("Jobs/users.txt", (1...1000).map { "u\($0)" }.joined(separator: "\n") + "\n")
        try project.write("Jobs/many.yaml", """
            identifier: web.many
            template: true
            parameters: [user]
            instances: users.txt
            command: ["/bin/true", "{user}"]
            """)
        #expect(waitFor(timeout: 600) {
            guard let run = try? newest(project), let id = run["runID"] as? Int else { return false }
            return id >= 1001 && run["outcome"] as? String == "success"
        }, "\(first.errors().suffix(2000))")
        first.cleanUp()

        let second = try Daemon(arguments)
        defer { second.cleanUp() }
        let port = try #require(second.dashboardPort(), "\(second.errors())")

        // status (live, through the control socket): the failed run's last lines.
        let text = try stdout(["status", "--state", project.state, "--runs", "1", "--before", "2"])
        #expect(text.contains("run 1  web.failing  started ") && text.contains("failure after "), "\(text)")
        #expect(text.contains("    | ... 148 lines before these\n    | progress 149\n    | progress 150\n    | fatal: disk full\n"), "\(text)")
        // --json: the whole kept tail, its bound and the results line.
        let page = json(try stdout(["status", "--state", project.state, "--json", "--runs", "1", "--before", "2"]))
        let run = try #require((page?["runs"] as? [[String: Any]])?.first)
        let output = try #require(run["output"] as? [String])
        #expect(run["runID"] as? Int == 1 && output.count == 100 && run["outputEarlier"] as? Int == 51)
        #expect(output.first == "progress 52" && output.last == "fatal: disk full", "\(output)")
        #expect(run["results"] as? [String] == [#"{"note": "half done"}"#])

        // The API and the job's page (the failed run's output open).
        let api = HTTP.body(HTTP.request(port, "/api/jobs/web.failing").text)
        let apiRun = try #require((json(api)?["runs"] as? [[String: Any]])?.first?["run"] as? [String: Any], "\(api.prefix(500))")
        #expect((apiRun["output"] as? [String])?.last == "fatal: disk full" && apiRun["outputEarlier"] as? Int == 51)
        let html = HTTP.request(port, "/jobs/web.failing").text
        #expect(html.contains("<details open><summary>output (last 100 lines of 151)</summary><pre>progress 52\n"), "\(html.suffix(3000))")
        #expect(html.contains("fatal: disk full</pre>") && html.contains("{&quot;note&quot;: &quot;half done&quot;}"), "\(html.suffix(3000))")
    }
}
