import Foundation
import Testing

/// Commands that did not do what the README says (issue 21): `check` on a first job, one file, a
/// byte-order mark and every setting in `--json`; `why` on timeline jobs, their families and
/// activities, live and from the files; the `simulate` header's length.
@Suite(.serialized) struct NewUserCLITests {
    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// A sandbox holding a copy of the shipped `Jobs/` and `Scripts/`.
    static func shippedProject() throws -> Sandbox {
        let box = Sandbox()
        try FileManager.default.removeItem(atPath: box.jobs)
        try FileManager.default.copyItem(atPath: project + "/Jobs", toPath: box.jobs)
        try FileManager.default.copyItem(atPath: project + "/Scripts", toPath: box.root + "/Scripts")
        return box
    }

    /// Regression: the README's first job was refused, blaming `Jobs/wallpaper-refresh.yaml:8:7`.
    @Test func theReadmesFirstJobIsAccepted() throws {
        let box = try Self.shippedProject()
        defer { box.remove() }
        try box.write("quick.yaml", "identifier: com.me.quick\ncommand: [\"true\"]\nresubmit: {after: 10m}\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains("com.me.quick: app-refresh, earliest +0s, allowance 30s, resubmit after 10m, namespace com.me"))
        // A second app-refresh job of that app is refused at the new file, naming both and the ways out.
        try box.write("another.yaml", "identifier: com.me.another\ncommand: [\"true\"]\n")
        let clash = try CLI.run(["check", box.jobs])
        #expect(clash.status == 1)
        #expect(clash.stdout.hasPrefix(box.jobs + "/another.yaml:1:13: too many app-refresh jobs in namespace \"com.me\""),
                "\(clash.stdout)")
        #expect(clash.stdout.contains("com.me.another (\(box.jobs)/another.yaml, this file) joins com.me.quick (\(box.jobs)/quick.yaml:1)"))
        #expect(clash.stdout.contains("expected kind: processing") && clash.stdout.contains("or a namespace: of its own"))
    }

    /// Regression: `check FILE` was refused ("expected a folder"), and a byte-order mark too.
    @Test func checkTakesOneFileAndAByteOrderMark() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("bom.yaml", "\u{FEFF}identifier: com.me.bom\ncommand: [\"/bin/true\"]\n")
        let folder = try CLI.run(["check", box.jobs])
        #expect(folder.status == 0, "\(folder.stdout)")
        let file = try CLI.run(["check", box.jobs + "/bom.yaml"])
        #expect(file.status == 0, "\(file.stdout)\(file.stderr)")
        #expect(file.stdout.contains("com.me.bom: app-refresh") && file.stdout.hasSuffix("1 job OK in \(box.jobs)/bom.yaml\n"))
        try box.write("bad.yaml", "identifier: com.other.bad\ncommand: [\"/bin/true\"]\nallowance: soon\n")
        let bad = try CLI.run(["check", box.jobs + "/bad.yaml"])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("\(box.jobs)/bad.yaml:3:12: allowance:"))
        #expect(bad.stdout.contains("1 error in \(box.jobs)/bad.yaml"))
    }

    /// Regression: `check --json` left out command, retry, requires, grace, namespace,
    /// environment and action.
    @Test func checkJSONShowsEverySetting() throws {
        let box = try Self.shippedProject()
        defer { box.remove() }
        try box.write("full.yaml", """
            identifier: com.me.full
            kind: processing
            command: ["/bin/sh", "-c", "true"]
            environment: {MODE: fast}
            requires: [network]
            grace: 12s
            namespace: mine
            retry: {backoff: linear, initial: 1m, max: 10m, limit: 3}
            """)
        let r = try CLI.run(["check", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stdout)")
        let rows = try #require(Self.json(r.stdout)?["jobs"] as? [[String: Any]])
        let full = try #require(rows.first { $0["identifier"] as? String == "com.me.full" })
        #expect(full["command"] as? [String] == ["/bin/sh", "-c", "true"])
        #expect(full["environment"] as? [String: String] == ["MODE": "fast"])
        #expect(full["requires"] as? [String] == ["network"])
        #expect(full["grace"] as? String == "12s")
        #expect(full["namespace"] as? String == "mine")
        let retry = try #require(full["retry"] as? [String: Any])
        #expect(retry["backoff"] as? String == "linear" && retry["initial"] as? String == "1m")
        #expect(retry["max"] as? String == "10m" && retry["limit"] as? Int == 3)
        #expect(full["simulate"] as? Bool == false)
        let staging = try #require(rows.first { $0["identifier"] as? String == "design.example.wallpaper.refresh" })
        let action = try #require(staging["action"] as? [String: Any])
        #expect(action["name"] as? String == "stage-playlist")
        #expect((action["options"] as? [String: String])?["timezone"] == "Europe/Paris")
        #expect(staging["namespace"] as? String == "design.example.wallpaper")
        #expect(staging["command"] as? [String] == [])
        let prune = try #require(rows.first { $0["identifier"] as? String == "design.example.shared.prune" })
        #expect(prune["requires"] as? [String] == ["external-power"])
        // The widget's budget scope and reload spacing are settings too.
        let widget = try #require(rows.first { $0["identifier"] as? String == "design.example.wallpaper.widget" })
        let words = try #require(widget["widget"] as? String)
        #expect(words.contains("per family") && words.contains("reloads 5m apart at least"), "\(words)")
    }

    /// Regression: the header said "2 days" for `--days 1` from 06:00 (two calendar days of rows).
    @Test func simulateHeaderSaysTheSimulatedLength() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: com.me.a\nkind: processing\ncommand: [\"/bin/true\"]\nresubmit: {after: 1h}\n")
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--start", "2026-12-01T06:00:00Z", "--days", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("simulation \(box.jobs): 1 day from 2026-12-01T06:00:00.000Z to 2026-12-02T06:00:00.000Z"),
                "\(r.stdout.prefix(200))")
    }

    /// Regression: `why` on a timeline job (and on `JOB#FAMILY` from the files) answered "not a
    /// job refreshd knows". Live and from the files it explains the timeline job, each family,
    /// an activity and the activities a job owns; an unknown identifier exits 1 with what was meant.
    @Test func whyExplainsTimelineJobsFamiliesAndActivities() throws {
        let box = Sandbox()
        defer { box.remove() }
        let script = box.root + "/provider.sh"
        try WidgetOpsCLITests.provider.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try box.write("wall.yaml", WidgetOpsCLITests.job(script))
        // A job that starts an activity and ends without ending it: refreshd ends it, it stays shown.
        try box.write("owner.yaml", """
            identifier: test.owner
            kind: processing
            command: ["/bin/sh", "-c", "echo '{\\"activity\\":\\"start\\",\\"id\\":\\"pack-1\\",\\"type\\":\\"Pack\\",\\"content\\":{\\"progress\\":0.5}}' >&3"]
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(WidgetOpsCLITests.settledBudget(box) == 1, "\(daemon.errors())")
        #expect(waitFor { WidgetOpsCLITests.activity(box.status(), "pack-1") != nil }, "\(daemon.errors())")

        func why(_ id: String, _ extra: [String] = []) throws -> (status: Int32, report: [String: Any]) {
            let r = try CLI.run(["why", id, "--state", box.state, "--json"] + extra)
            return (r.status, Self.json(r.stdout) ?? ["stdout": r.stdout, "stderr": r.stderr])
        }
        for live in [true, false] {
            if !live {
                daemon.signal(SIGTERM)
                #expect(daemon.wait(timeout: 15) == 0)
            }
            let files = live ? [] : ["--jobs", box.jobs]
            let timeline = try why("test.wall", files)
            #expect(timeline.status == 0, "\(timeline.report)")
            #expect(timeline.report["subject"] as? String == "timeline" && timeline.report["live"] as? Bool == live)
            let paragraph = timeline.report["paragraph"] as? String ?? ""
            #expect(paragraph.hasPrefix("test.wall is a timeline job"), "\(paragraph)")
            #expect(paragraph.contains("systemSmall: ") && paragraph.contains("1 of 5 reloads used"), "\(paragraph)")
            #expect(!paragraph.contains("not a job"))

            let family = try why("test.wall#systemSmall", files)
            #expect(family.status == 0 && family.report["subject"] as? String == "provider", "\(family.report)")
            #expect(!(family.report["paragraph"] as? String ?? "").contains("not a job"), "\(family.report)")

            let activity = try why("pack-1", files)
            #expect(activity.status == 0 && activity.report["subject"] as? String == "activity", "\(activity.report)")
            #expect((activity.report["paragraph"] as? String)?.contains("started by job test.owner") == true, "\(activity.report)")
            let owner = try why("test.owner", files)
            #expect((owner.report["paragraph"] as? String)?.contains("Its live activity: pack-1 (Pack,") == true, "\(owner.report)")

            let near = try why("test.wal#systemSmall", files)
            #expect(near.status == 1 && near.report["subject"] as? String == "unknown", "\(near.report)")
            #expect((near.report["paragraph"] as? String)?.hasSuffix("Did you mean test.wall#systemSmall?") == true, "\(near.report)")
            let text = try CLI.run(["why", "no.such.job", "--state", box.state] + files)
            #expect(text.status == 1)
            #expect(text.stdout.hasPrefix("no.such.job is not a job refreshd knows"), "\(text.stdout)")
        }
    }
}
