import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import RefreshdTestSupport
import Testing

/// The web dashboard on a cluster node (issue 32, item 3), with two real nodes on the suite's
/// private PostgreSQL: node a serves `--http`; every page answers from the database, so jobs,
/// runs and instances in shards node b leads show on a's pages; an action taken on a's page
/// reaches the shard's leader whichever node it is; the Cluster page shows who leads each shard
/// at which epoch and a's own lease events; `stats runs` answers alike through either node;
/// every page fits 1400 px and a 390 px phone in Debian's chromium.
extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractions: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

@Suite(.serialized) struct ClusterDashboardTests {
    static let token = "cluster-dashboard-token-0123456789"

    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    func object(_ port: Int, _ path: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(HTTP.body(HTTP.request(port, path).text).utf8))) as? [String: Any]
    }

    /// A namespace whose shard node `owner` leads (among 4 shards), from the Cluster page's facts.
    func namespace(ledBy owner: String, _ cluster: [String: Any]) -> String? {
        let shards = ((cluster["cluster"] as? [String: Any])?["shards"] as? [[String: Any]]) ?? []
        let led = Set(shards.filter { $0["owner"] as? String == owner && $0["led"] as? Bool == true }.compactMap { $0["shard"] as? Int })
        return (0..<200).map { "dash\($0)" }.first { led.contains(ShardMap(shardCount: 4).shard(of: $0)) }
    }

    @Test func everyPageAnswersOnANodeForTheWholeCluster() throws {
        let scratch = try ClusterSandbox("dashboard", shards: 4)
        defer { scratch.close() }
        try (Self.token + "\n").write(toFile: scratch.root + "/token", atomically: true, encoding: .utf8)
        chmod(scratch.root + "/token", 0o600)
        try scratch.job("feed.yaml", """
            identifier: dash.feed
            template: true
            parameters: [user]
            kind: processing
            command: ["/bin/sh", "-c", "echo feed for {user}"]
            earliest: +1s
            allowance: 10s
            """)
        try scratch.start("a", lease: "2s", extra: ["--http", "127.0.0.1:0", "--http-token-file", scratch.root + "/token"])
        try scratch.start("b", lease: "2s")
        var port: Int?
        #expect(waitFor(30) {
            let log = scratch.nodes["a"]?.log() ?? ""
            guard let range = log.range(of: "dashboard at http://127.0.0.1:") else { return false }
            port = Int(log[range.upperBound...].prefix { $0.isNumber })
            return port != nil
        }, "node a serves no dashboard: \(scratch.logs())")
        let web = try #require(port)

        // Both nodes lead, as the Cluster page (read on a, from the database) says.
        var cluster: [String: Any] = [:]
        #expect(waitFor(30) {
            cluster = object(web, "/api/cluster") ?? [:]
            let nodes = (cluster["nodes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            // a's own lease events, wall-clock times (its lease is taken before its restore ends).
            let events = cluster["events"] as? [[String: Any]] ?? []
            let now = Date().timeIntervalSince1970
            let recent = events.contains { event in
                guard let text = event["at"] as? String, let at = ISO8601DateFormatter.withFractions.date(from: text) else { return false }
                return (event["line"] as? String ?? "").hasPrefix("leads shard ") && abs(at.timeIntervalSince1970 - now) < 120
            }
            return nodes == ["a", "b"] && (cluster["unled"] as? [Int])?.isEmpty == true && recent
        }, "\(cluster) \(scratch.logs())")
        let page = HTTP.request(web, "/cluster").text
        #expect(page.contains("aria-current=\"page\">Cluster</a>") && page.contains("(this node)") && page.contains("<th>epoch</th>"), "\(page)")

        // A job in a shard b leads, and one that fails in a shard a leads: both on a's pages.
        let remote = try #require(namespace(ledBy: "b", cluster)), local = try #require(namespace(ledBy: "a", cluster))
        try scratch.job("remote.yaml", """
            identifier: \(remote).tick
            kind: processing
            command: ["true"]
            resubmit: {calendar: "*:*:00/1"}
            missed: skip
            allowance: 5s
            """)
        try scratch.job("failing.yaml", """
            identifier: \(local).failing
            kind: processing
            command: ["/bin/sh", "-c", "echo broken >&2; exit 3"]
            earliest: +1s
            allowance: 5s
            retry: {backoff: exponential, initial: 1h, limit: 5}
            """)
        #expect(waitFor(30) {
            let job = object(web, "/api/jobs/\(remote).tick") ?? [:]
            return (job["runs"] as? [[String: Any]] ?? []).count >= 2
        }, "b's runs do not show on a: \(HTTP.request(web, "/api/jobs/\(remote).tick").text) \(scratch.logs())")
        #expect(waitFor(30) {
            HTTP.request(web, "/api/failures").text.contains("\"\(local).failing\"")
        }, "\(HTTP.request(web, "/api/failures").text)")
        let failing = HTTP.request(web, "/jobs/\(local).failing").text
        #expect(failing.contains("broken") && failing.contains("exit 3"), "the failed run's kept output: \(failing)")
        let overview = object(web, "/api/overview") ?? [:]
        #expect((overview["runsLast24h"] as? Int ?? 0) >= 2, "\(overview)")

        // An action on a's page reaches the leader of the instance's shard, whichever node it is.
        let bearer = ["Authorization: Bearer \(Self.token)"]
        for key in ["alice", "bob", "carol", "dave"] {
            let added = HTTP.request(web, "/api/jobs/dash.feed/instances?key=\(key)", method: "POST", headers: bearer)
            #expect(added.status == 200, "\(added.text)")
        }
        #expect(waitFor(30) {
            let jobs = HTTP.request(web, "/jobs").text
            return jobs.contains("template · 4 instances")
        }, "\(HTTP.request(web, "/jobs").text) \(scratch.logs())")
        #expect(HTTP.request(web, "/jobs/dash.feed%5Bbob%5D").text.contains("echo feed for bob"), "an instance's page shows its command filled")
        #expect(HTTP.request(web, "/api/jobs/dash.feed").text.contains("\"key\":\"dave\""))
        // Search on a node (issue 33, item 5): the instances in every shard, merged in one order
        // and paged both ways with their position; runs and jobs by state, from every shard.
        func keys(_ path: String) -> (keys: [String], page: [String: Any]) {
            let template = object(web, path)?["template"] as? [String: Any] ?? [:]
            return ((template["instances"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }, template["page"] as? [String: Any] ?? [:])
        }
        #expect(keys("/api/jobs/dash.feed").keys == ["alice", "bob", "carol", "dave"])
        let found = keys("/api/jobs/dash.feed?q=a")
        #expect(found.keys == ["alice", "carol", "dave"] && found.page["total"] as? Int == 3, "\(found)")
        let after = keys("/api/jobs/dash.feed?after=bob")
        #expect(after.keys == ["carol", "dave"] && after.page["first"] as? Int == 3 && after.page["total"] as? Int == 4, "\(after)")
        let before = keys("/api/jobs/dash.feed?beforeKey=carol")
        #expect(before.keys == ["alice", "bob"] && before.page["first"] as? Int == 1 && before.page["previous"] == nil, "\(before)")
        let failedRuns = object(web, "/api/runs?job=\(local).failing&outcome=failed") ?? [:]
        #expect((failedRuns["page"] as? [String: Any])?["total"] as? Int == 1, "\(failedRuns)")
        #expect((object(web, "/api/jobs?state=failing")?["jobs"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["\(local).failing"])
        let remoteRuns = object(web, "/api/runs?job=\(remote).tick&outcome=success") ?? [:]
        #expect(((remoteRuns["page"] as? [String: Any])?["total"] as? Int ?? 0) >= 2, "b's runs searched on a: \(remoteRuns)")
        let refused = HTTP.request(web, "/api/jobs/dash.feed/instances?key=eve", method: "POST")
        #expect(refused.status == 401, "an action without the token: \(refused.text)")
        // The metrics are the cluster's (every node answers alike).
        #expect(HTTP.request(web, "/metrics").text.contains("refreshd_cluster_node_shards_led{node=\"a\"}"))

        // `stats runs` through either node: the whole cluster's runs (b's tick, a's failure, the
        // instances folded under their template), from the database.
        for node in ["a", "b"] {
            var rows: [String: [String: Any]] = [:]
            #expect(waitFor(20) {
                let (_, output) = (try? scratch.cli(["stats", "runs", "--json", "--state", scratch.root + "/state-" + node])) ?? (nil, "")
                let object = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any] ?? [:]
                rows = Dictionary((object["rows"] as? [[String: Any]] ?? []).map { ($0["identifier"] as? String ?? "", $0) },
                                  uniquingKeysWith: { first, _ in first })
                return ((rows["\(remote).tick"]?["outcomes"] as? [String: Int])?["success"] ?? 0) >= 2
                    && (rows["\(local).failing"]?["outcomes"] as? [String: Int])?["failure"] == 1
                    && rows["dash.feed"]?["instances"] as? Int == 4
            }, "stats runs via \(node): \(rows)")
        }

        // Every page fits 1400 px and a 390 px phone in the real browser, with no script error.
        let pages = ["/cluster", "/", "/jobs", "/jobs/dash.feed", "/jobs/\(local).failing", "/failures", "/widgets", "/activities",
                     "/runs", "/jobs/dash.feed?q=a&state=failing"]
        let output = scratch.root + "/widths.json"
        let browser = try Node.start([Self.repository + "/Tests/Browser/page_widths.py",
                                      "http://127.0.0.1:\(web)", scratch.root] + pages,
                                     environment: [:], output: output, executable: "/usr/bin/python3")
        let status = browser.wait(120)
        let text = browser.log()
        let result = (try? JSONSerialization.jsonObject(with: Data((text.split(separator: "\n").last.map(String.init) ?? "").utf8))) as? [String: Any]
        #expect(status == 0, "the browser did not run: \(text)")
        let widths = result?["widths"] as? [String: [Int]] ?? [:]
        #expect(widths.count == pages.count * 2, "\(text)")
        for (page, width) in widths.sorted(by: { $0.key < $1.key }) {
            #expect(width.count == 2 && width[0] <= width[1], "\(page) is \(width.first ?? -1) px wide in a \(width.last ?? -1) px window")
        }
        let console = (result?["console"] as? [String: Any]) ?? [:]
        #expect(console.isEmpty, "script errors: \(console)")
        // The Cluster page as the README shows it (`.build/dashboard-screenshots/`, as the one
        // machine's browser test leaves its screenshots).
        let screenshots = Self.repository + "/.build/dashboard-screenshots"
        try? FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: screenshots + "/cluster.png")
        try? FileManager.default.copyItem(atPath: scratch.root + "/desktop-cluster.png", toPath: screenshots + "/cluster.png")
        #expect(FileManager.default.fileExists(atPath: screenshots + "/cluster.png"), "no screenshot of the Cluster page")
        #expect(scratch.nodes["a"]?.alive == true && scratch.nodes["b"]?.alive == true, "\(scratch.logs())")
    }
}
