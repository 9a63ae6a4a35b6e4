import Foundation
import Testing

/// `status`, `ctl reload`, `ctl activity`, `stats reloads`, `why`, `watch` and the metrics for
/// widgets and activities, against a real `refreshd run` whose timeline provider is a shell
/// script writing its timeline to fd 3; then, after a restart, from the state files.
@Suite(.serialized) struct WidgetOpsCLITests {
    /// A provider: one entry now and one an hour later, policy atEnd, on the results channel.
    static let provider = """
        #!/bin/sh
        now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        later=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
        echo "{\\"entries\\":[{\\"date\\":\\"$now\\",\\"content\\":{\\"asset\\":\\"a-$REFRESH_WIDGET_FAMILY\\"}},{\\"date\\":\\"$later\\",\\"content\\":{\\"asset\\":\\"b\\"}}],\\"policy\\":\\"atEnd\\"}" >&3
        """

    static func job(_ script: String) -> String {
        """
        identifier: test.wall
        kind: timeline
        command: ["\(script)"]
        allowance: 20s
        widget:
          kind: wallpaper
          families: [systemSmall]
          budget: 5
          min-reload-interval: 0s
        """
    }

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// The one widget of `status --json`.
    static func widget(_ status: [String: Any]?) -> [String: Any]? {
        ((status?["timelines"] as? [String: Any])?["widgets"] as? [[String: Any]])?.first
    }

    static func activity(_ status: [String: Any]?, _ id: String) -> [String: Any]? {
        ((status?["activities"] as? [String: Any])?["activities"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    /// The widget's budget use once no provider call is in flight.
    static func settledBudget(_ box: Sandbox) -> Int? {
        var used: Int?
        _ = waitFor {
            guard let w = widget(box.status()), w["providerRunningSince"] == nil, w["shown"] != nil else { return false }
            used = w["budgetUsed"] as? Int
            return true
        }
        return used
    }

    @Test func widgetsAndActivitiesLiveAndAfterARestart() throws {
        let box = Sandbox()
        defer { box.remove() }
        let script = box.root + "/provider.sh"
        try Self.provider.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try box.write("wall.yaml", Self.job(script))
        let metrics = box.root + "/metrics.prom"
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", metrics])
        defer { daemon.cleanUp() }

        // The first timeline: shown, one reload used of 5.
        #expect(Self.settledBudget(box) == 1, "\(daemon.errors())")
        let shown = Self.widget(box.status())
        #expect(((shown?["shown"] as? [String: Any])?["content"] as? String) == #"{"asset":"a-systemSmall"}"#)
        #expect(shown?["budgetLeft"] as? Int == 4 && shown?["nextReloadWhy"] as? String == "policy")
        let text = try CLI.run(["status", "--state", box.state]).stdout
        #expect(text.contains("wallpaper/systemSmall  (job test.wall)"))
        #expect(text.contains("budget: 1 used, 4 left of 5 in 24 h"), "\(text)")

        // An explicit reload is counted; a foreground one is exempt.
        let reload = try CLI.run(["ctl", "reload", "wallpaper", "--state", box.state])
        #expect(reload.status == 0 && reload.stdout.hasPrefix("asked wallpaper for a reload"), "\(reload.stderr)")
        #expect(Self.settledBudget(box) == 2)
        let foreground = try CLI.run(["ctl", "reload", "--all", "--foreground", "--state", box.state])
        #expect(foreground.status == 0)
        #expect(waitFor { daemon.errors().contains("app foreground") })
        #expect(Self.settledBudget(box) == 2)
        let unknown = try CLI.run(["ctl", "reload", "nope", "--state", box.state, "--json"])
        #expect(unknown.status == 1)
        #expect(((Self.json(unknown.stdout)?["error"] as? [String: Any])?["code"] as? String) == "unknown-kind")

        // why, for a provider identifier, names the widget and its budget.
        let why = try CLI.run(["why", "test.wall#systemSmall", "--state", box.state, "--json"])
        #expect((Self.json(why.stdout)?["reasons"] as? [String])?.contains("widget-provider") == true)
        #expect((Self.json(why.stdout)?["paragraph"] as? String)?.contains("2 of 5 reloads used") == true, "\(why.stdout)")

        // An activity through its states; watch sees its progress move.
        let watch = try CLI.start(["watch", "--state", box.state, "--for", "3"])
        defer { watch.cleanUp() }
        let start = try CLI.run(["ctl", "activity", "start", "pack", "--type", "Download", "--progress", "0.25",
                                 "--stale-date", "+1h", "--state", box.state])
        #expect(start.status == 0 && start.stdout.hasPrefix("started activity pack"), "\(start.stderr)")
        #expect(Self.activity(box.status(), "pack")?["state"] as? String == "active")
        #expect(Self.activity(box.status(), "pack")?["progressPercent"] as? Double == 25)
        let duplicate = try CLI.run(["ctl", "activity", "start", "pack", "--type", "Download", "--state", box.state, "--json"])
        #expect(((Self.json(duplicate.stdout)?["error"] as? [String: Any])?["code"] as? String) == "duplicate-id")
        usleep(300_000)
        #expect(try CLI.run(["ctl", "activity", "update", "pack", "--progress", "0.6", "--state", box.state]).status == 0)
        #expect(Self.activity(box.status(), "pack")?["progressPercent"] as? Double == 60)
        #expect(watch.wait(timeout: 10) == 0)
        #expect(watch.output().contains("Widgets") && watch.output().contains("budget [####......] 2/5"), "\(watch.output())")
        #expect(watch.output().contains("pack  Download  active  [######....] 60%"), "\(watch.output())")
        let end = try CLI.run(["ctl", "activity", "end", "pack", "--progress", "1", "--state", box.state])
        #expect(end.status == 0)
        #expect(Self.activity(box.status(), "pack")?["state"] as? String == "ended")
        let again = try CLI.run(["ctl", "activity", "end", "pack", "--state", box.state, "--json"])
        #expect(((Self.json(again.stdout)?["error"] as? [String: Any])?["code"] as? String) == "not-allowed")
        #expect(try CLI.run(["ctl", "activity", "start", "kept", "--type", "Download", "--progress", "0.4",
                             "--state", box.state]).status == 0)

        // stats reloads counts it: 3 requested, 2 counted, 1 exempt.
        let stats = Self.json(try CLI.run(["stats", "reloads", "--state", box.state, "--json"]).stdout)
        let row = (stats?["rows"] as? [[String: Any]])?.first
        #expect(row?["reloads_requested"] as? Int == 3 && row?["reloads_performed"] as? Int == 2)
        #expect(row?["reloads_exempt"] as? Int == 1 && row?["provider_calls"] as? Int == 3, "\(String(describing: row))")

        // The metrics carry the budget left and the activity states.
        #expect(waitFor {
            let prom = (try? String(contentsOfFile: metrics, encoding: .utf8)) ?? ""
            return prom.contains(#"refreshd_widget_budget_left{kind="wallpaper",family="systemSmall"} 3"#)
                && prom.contains(#"refreshd_activities{state="ended"} 1"#) && prom.contains(#"refreshd_activities{state="active"} 1"#)
        })

        // Stopped: status and stats from the files tell the same.
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 15) == 0)
        let offline = try CLI.run(["status", "--state", box.state, "--jobs", box.jobs])
        #expect(!offline.stdout.hasPrefix("Live"))
        #expect(offline.stdout.contains("budget: 2 used, 3 left of 5 in 24 h"), "\(offline.stdout)")
        #expect(offline.stdout.contains("kept  Download  active since") && offline.stdout.contains("progress 40%"))
        let files = box.status()
        #expect(Self.widget(files)?["budgetUsed"] as? Int == 2)
        #expect(Self.activity(files, "pack")?["state"] as? String == "ended")
        let offlineStats = Self.json(try CLI.run(["stats", "reloads", "--state", box.state, "--json"]).stdout)
        #expect(((offlineStats?["rows"] as? [[String: Any]])?.first?["reloads_performed"] as? Int) == 2)

        // Restarted: the widget keeps its timeline and budget, the activity its state.
        let restarted = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { restarted.cleanUp() }
        #expect(waitFor { (try? CLI.run(["status", "--state", box.state]))?.stdout.hasPrefix("Live") == true })
        #expect(Self.settledBudget(box) == 2)
        #expect(Self.activity(box.status(), "kept")?["state"] as? String == "active")
    }
}
