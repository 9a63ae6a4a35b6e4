import Foundation
import Testing

/// Per-instance widgets under the real `refreshd run` (issue 23): a timeline template whose
/// kind holds `{user}`; instances added by `ctl` each publish their own widget under the shared
/// container (a key with '@' under its derived kind), survive kill -9 with their budget, and a
/// removed instance's publication is gone.
@Suite(.serialized) struct InstanceWidgetDaemonTests {
    func published(_ box: Sandbox, _ kind: String) -> String? {
        try? String(contentsOfFile: box.state + "/shared/widgets/\(kind)/systemSmall.json", encoding: .utf8)
    }

    @Test func instancesPublishTheirOwnWidgetsSurviveKill9AndRemovalDropsThem() throws {
        let box = Sandbox()
        defer { box.remove() }
        // The provider prints one entry naming its user; it sees its own kind.
        try box.writeScript("Scripts/provider", """
            #!/bin/sh
            printf '{"entries":[{"date":"%s","content":{"user":"%s","kind":"%s"}}],"policy":"never"}\\n' \\
              "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$REFRESH_WIDGET_KIND" >&3
            """)
        try box.write("feed.yaml", """
            identifier: test.feed.widget
            kind: timeline
            template: true
            parameters: [user]
            command: ["Scripts/provider", "{user}"]
            widget: {kind: "feed.{user}", families: [systemSmall], budget: 7}
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        let added = try CLI.run(["ctl", "instance", "add", "test.feed.widget", "alice", "bob@example.com", "--state", box.state])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(waitFor(timeout: 20) { published(box, "feed.alice") != nil && published(box, "feed.bob-at-example.com") != nil })
        // Each provider ran with its own value and was told its own kind.
        let alice = published(box, "feed.alice") ?? "", bob = published(box, "feed.bob-at-example.com") ?? ""
        #expect(alice.contains(#""user":"alice""#) && alice.contains(#""kind":"feed.alice""#), "\(alice)")
        #expect(bob.contains(#""user":"bob@example.com""#) && bob.contains(#""kind":"feed.bob-at-example.com""#), "\(bob)")
        // A key whose kind would be another instance's is refused, naming both.
        let clash = try CLI.run(["ctl", "instance", "add", "test.feed.widget", "bob-at-example.com", "--state", box.state])
        #expect(clash.status == 1)
        #expect(clash.stderr.contains("its widget kind \"feed.bob-at-example.com\" is already test.feed.widget[bob@example.com]'s"))
        // Status folds the instances' widgets into one line for the template.
        let status = try CLI.run(["status", "--state", box.state])
        #expect(status.stdout.contains("test.feed.widget[*]  2 instances, 2 widgets  0 stale"), "\(status.stdout)")
        // The widgets' provider runs fold too, in status and stats, per template and family.
        #expect(status.stdout.contains("  test.feed.widget[*]#systemSmall  2 instances: 2 success"), "\(status.stdout)")
        let lastOutcomes = status.stdout.components(separatedBy: "Jobs (last outcome):").last ?? ""
        #expect(!lastOutcomes.contains("test.feed.widget[alice]#systemSmall"), "\(status.stdout)")
        let runs = try CLI.run(["stats", "runs", "--state", box.state])
        #expect(runs.stdout.contains("  test.feed.widget[*]#systemSmall  2 instances  2 runs: 2 success  0 failing"), "\(runs.stdout)")
        let reloads = try CLI.run(["stats", "reloads", "--state", box.state])
        #expect(reloads.stdout.contains("test.feed.widget[*]/systemSmall (2)"), "\(reloads.stdout)")
        #expect(!reloads.stdout.contains("feed.alice/systemSmall"), "\(reloads.stdout)")
        // why: an instance of a timeline template is its own widget, run by its providers.
        let why = try CLI.run(["why", "test.feed.widget[alice]", "--state", box.state])
        #expect(why.stdout.hasPrefix("test.feed.widget[alice] is the instance alice of timeline template test.feed.widget, "
            + "a widget of its own. test.feed.widget[alice] is a timeline job: it provides the timelines of widget feed.alice "
            + "(systemSmall)"), "\(why.stdout)")
        #expect(!why.stdout.contains("ctl submit"), "\(why.stdout)")

        daemon.signal(SIGKILL)
        #expect(daemon.wait() == 128 + SIGKILL)
        // From the state files (refreshd down): the instances' widgets fold as when live.
        let saved = try CLI.run(["status", "--state", box.state, "--jobs", box.jobs])
        #expect(saved.stdout.contains("test.feed.widget[*]  2 instances, 2 widgets  0 stale"), "\(saved.stdout)")
        #expect(!saved.stdout.contains("(job ?)"), "\(saved.stdout)")
        let savedReloads = try CLI.run(["stats", "reloads", "--state", box.state, "--jobs", box.jobs])
        #expect(savedReloads.stdout.contains("test.feed.widget[*]/systemSmall (2)"), "\(savedReloads.stdout)")
        let again = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { again.cleanUp() }
        #expect(waitFor { again.errors().contains("refreshd started") })
        // Restored, not asked again: each widget's one counted reload is still in its budget.
        let json = try CLI.run(["status", "--state", box.state, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let widgets = ((object?["timelines"] as? [String: Any])?["widgets"] as? [[String: Any]]) ?? []
        #expect(Set(widgets.compactMap { $0["job"] as? String }) == ["test.feed.widget[alice]", "test.feed.widget[bob@example.com]"])
        #expect(widgets.allSatisfy { $0["budgetUsed"] as? Int == 1 && $0["budgetLimit"] as? Int == 7 }, "\(widgets)")

        let removed = try CLI.run(["ctl", "instance", "remove", "test.feed.widget", "bob@example.com", "--state", box.state])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(waitFor { published(box, "feed.bob-at-example.com") == nil })
        #expect(published(box, "feed.alice") != nil)
        again.signal(SIGTERM)
        #expect(again.wait() == 0)
    }

    /// A plain timeline job added by a later reload may not take an instance's widget kind
    /// (issue 23): the instance was added at run time, so only the reload can see the clash; it
    /// is refused whole at the job's widget.kind (file, line, column), the running config and
    /// the instance's widget stay. Before the fix the job took the instance's widget over.
    @Test func aReloadedPlainTimelineJobCannotTakeAnInstancesKind() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.writeScript("Scripts/provider", """
            #!/bin/sh
            printf '{"entries":[{"date":"%s","content":{"by":"%s"}}],"policy":"never"}\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" >&3
            """)
        try box.write("feed.yaml", """
            identifier: test.feed.widget
            kind: timeline
            template: true
            parameters: [user]
            command: ["Scripts/provider", "{user}"]
            widget: {kind: "feed.{user}", families: [systemSmall]}
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        let added = try CLI.run(["ctl", "instance", "add", "test.feed.widget", "alice", "--state", box.state])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(waitFor(timeout: 20) { published(box, "feed.alice")?.contains(#""by":"alice""#) ?? false })

        try box.write("plain.yaml", """
            identifier: test.plain.widget
            kind: timeline
            command: ["Scripts/provider", "plain"]
            widget:
              families: [systemSmall]
              kind: feed.alice
            """)
        let expected = "reload refused: \(box.jobs)/plain.yaml:6:9: widget.kind: \"feed.alice\" is the widget kind of instance "
            + "test.feed.widget[alice] (its template's kind \"feed.{user}\""
        #expect(waitFor(timeout: 20) { daemon.errors().contains(expected) }, "\(daemon.errors())")
        #expect(daemon.errors().contains("refreshd ctl instance remove test.feed.widget alice)"))
        #expect(daemon.errors().contains("keeping the running config of 1 job"))
        // The instance's widget stays its own: the plain job never ran or published.
        let status = try CLI.run(["status", "--state", box.state, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let widgets = ((object?["timelines"] as? [String: Any])?["widgets"] as? [[String: Any]]) ?? []
        #expect(widgets.compactMap { $0["job"] as? String } == ["test.feed.widget[alice]"], "\(widgets)")
        #expect(published(box, "feed.alice")?.contains(#""by":"alice""#) ?? false)
        #expect(!daemon.errors().contains("test.plain.widget#systemSmall"))

        // At a start, as at a reload, the instance added at run time (in the state, not in the
        // files) keeps its kind: the job taking it is an error at its widget.kind, and refreshd
        // refuses to start, as for any invalid job file, changing nothing of the state.
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let refused = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state], timeout: 30)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(box.jobs)/plain.yaml:6:9: widget.kind: \"feed.alice\" is the widget kind of instance "
            + "test.feed.widget[alice] (its template's kind \"feed.{user}\""), "\(refused.stderr)")
        #expect(refused.stderr.contains("the instance is in the state, restored at the start with its widget: give this job "
            + "another kind to start"), "\(refused.stderr)")
        #expect(refused.stderr.contains("refreshd: refusing to start: 1 error in \(box.jobs)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("refreshd started"))
        // Another kind for the job: refreshd starts, and the instance is there with its widget.
        try box.write("plain.yaml", """
            identifier: test.plain.widget
            kind: timeline
            command: ["Scripts/provider", "plain"]
            widget:
              families: [systemSmall]
              kind: feed.plain
            """)
        let again = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { again.cleanUp() }
        #expect(waitFor { again.errors().contains("refreshd started") }, "\(again.errors())")
        #expect(!again.errors().contains("is not declared"), "\(again.errors())")
        let list = try CLI.run(["ctl", "instance", "list", "test.feed.widget", "--state", box.state])
        #expect(list.stdout.contains("alice"), "\(list.stdout)")
        let restarted = try CLI.run(["status", "--state", box.state, "--json"])
        let after = try JSONSerialization.jsonObject(with: Data(restarted.stdout.utf8)) as? [String: Any]
        let kinds = ((after?["timelines"] as? [String: Any])?["widgets"] as? [[String: Any]])?.compactMap { $0["job"] as? String }
        #expect(kinds?.sorted() == ["test.feed.widget[alice]", "test.plain.widget"], "\(String(describing: kinds))")
    }
}
