import Foundation
import Testing

/// Config hot reload against the real binary: inotify on Jobs/ and SIGHUP.
@Suite(.serialized) struct ReloadTests {
    func pending(_ box: Sandbox) -> [String: String] {
        var result: [String: String] = [:]
        for p in (box.status()?["pending"] as? [[String: Any]]) ?? [] {
            if let id = p["identifier"] as? String { result[id] = p["earliest"] as? String }
        }
        return result
    }

    @Test func validEditsTakeEffectWhileAJobRuns() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("slow.yaml", """
            identifier: test.slow
            kind: processing
            command: ["/bin/sh", "-c", "sleep 1; echo slow-done"]
            """)
        try box.write("keep.yaml", "identifier: test.keep\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\n")
        try box.write("gone.yaml", "identifier: test.gone\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\n")
        try box.write("edit.yaml", "identifier: test.edit\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\n")
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { pending(box).count == 3 && daemon.errors().contains("test.slow[1] started") })
        let before = pending(box)

        try FileManager.default.removeItem(atPath: box.jobs + "/gone.yaml")
        try box.write("edit.yaml", "identifier: test.edit\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +2h\n")
        try box.write("new.yaml", "identifier: test.new\nkind: processing\ncommand: [\"/bin/echo\", \"new-job\"]\n")
        // The three edits may arrive as one burst or two: either way the end state is the same.
        #expect(waitFor { daemon.errors().contains("reloaded") })
        #expect(waitFor { box.runs().contains { $0 == ("test.new", "success") } })
        #expect(waitFor { box.runs().contains { $0 == ("test.slow", "success") } })  // finished under the old config
        let after = pending(box)
        #expect(after["test.gone"] == nil)
        #expect(after["test.keep"] == before["test.keep"])  // unchanged keeps its request
        #expect(after["test.edit"] != before["test.edit"])  // changed: replaced
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test func invalidEditIsRefusedAndTheRunningConfigStays() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("slow.yaml", """
            identifier: test.slow
            kind: processing
            command: ["/bin/sh", "-c", "sleep 1"]
            """)
        try box.write("keep.yaml", "identifier: test.keep\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\n")
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("test.slow[1] started") })
        let before = pending(box)
        try box.write("keep.yaml", "identifier: test.keep\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +1h\nallowance: soon\n")
        #expect(waitFor { daemon.errors().contains("reload refused") })
        #expect(daemon.errors().contains("keep.yaml:5:12: allowance: expected a duration"))
        #expect(daemon.errors().contains("keeping the running config of 2 jobs"))
        #expect(waitFor { box.runs().contains { $0 == ("test.slow", "success") } })
        #expect(pending(box) == before)
        // SIGHUP re-reads too: after fixing the file, the change applies.
        try box.write("keep.yaml", "identifier: test.keep\nkind: processing\ncommand: [\"/bin/true\"]\nearliest: +3h\n")
        daemon.signal(SIGHUP)
        #expect(waitFor { daemon.errors().contains("1 changed") })
        #expect(pending(box)["test.keep"] != before["test.keep"])
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }
}
