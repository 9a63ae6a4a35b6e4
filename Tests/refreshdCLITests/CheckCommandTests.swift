import Foundation
import Testing

@Suite struct CheckCommandTests {
    @Test func printsEveryErrorWithLocationAndExitsOne() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nallowence: 30s\n")
        try box.write("b.yaml", "identifier: test.b\nkind: nightly\ncommand: [\"/bin/true\"]\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 1)
        #expect(r.stdout.contains("a.yaml:3:1: unknown key \"allowence\" (did you mean \"allowance\"?)"))
        #expect(r.stdout.contains("b.yaml:2:7:"))
        #expect(r.stdout.contains("2 errors"))
    }

    @Test func validDirectoryListsJobs() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nresubmit: {after: 1h30m}\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 0)
        #expect(r.stdout.contains("test.a: app-refresh, earliest +0s, allowance 30s, resubmit after 1h30m"))
        let j = try CLI.run(["check", box.jobs, "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.first?["identifier"] as? String == "test.a")
    }
}
