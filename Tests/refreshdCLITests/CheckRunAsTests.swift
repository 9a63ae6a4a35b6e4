import Foundation
import Testing

/// `refreshd check` with `user:` and `group:` (issue 35): what they resolve to on this machine,
/// in the text and `--json`; an unknown name at its file:line:column. Resolving a user needs no
/// privilege, but `user:` is refused unless refreshd runs as root, so the valid case needs root
/// (the machine and CI run the suite as root; `nobody` is uid 65534 on every Debian).
@Suite struct CheckRunAsTests {
    @Test(.enabled(if: geteuid() == 0, "user: is accepted only when refreshd runs as root"))
    func checkShowsWhoTheJobRunsAs() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nuser: nobody\ngroup: nogroup\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("test.a: app-refresh, earliest +0s, allowance 30s, namespace test, runs as nobody (uid 65534, gid 65534, groups 65534)"),
                "\(r.stdout)")
        let j = try CLI.run(["check", box.jobs, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        let runAs = try #require((report["jobs"] as? [[String: Any]])?.first?["runAs"] as? [String: Any], "\(j.stdout)")
        #expect(runAs["user"] as? String == "nobody")
        #expect(runAs["group"] as? String == "nogroup")
        #expect(runAs["uid"] as? Int == 65534)
        #expect(runAs["gid"] as? Int == 65534)
        #expect(runAs["groups"] as? [Int] == [65534])
        #expect(runAs["home"] as? String == "/nonexistent")
    }

    @Test func anUnknownUserIsLocated() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nuser: no-such-user-here\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 1)
        #expect(r.stdout.contains("a.yaml:3:7: user: no user \"no-such-user-here\" on this machine; "
            + "expected a name or uid of its user database (getent passwd)"), "\(r.stdout)")
        let j = try CLI.run(["check", box.jobs, "--json"])
        #expect(j.stdout.contains("\"field\" : \"user\""), "\(j.stdout)")
    }
}
