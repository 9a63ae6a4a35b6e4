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
        #expect(j.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        #expect(report["valid"] as? Bool == true)
        #expect(report["directory"] as? String == box.jobs)
        #expect((report["errors"] as? [Any])?.isEmpty == true)
        let rows = try #require(report["jobs"] as? [[String: Any]])
        #expect(rows.first?["identifier"] as? String == "test.a")
        #expect(rows.first?["resubmit"] as? String == "after 1h30m")
        #expect(rows.first?["catchUp"] == nil)  // only with missed: all
    }

    /// Regression: `check --json` printed plain text when the folder had errors.
    @Test func jsonWithErrorsIsAJSONObjectAndExitsOne() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", """
            identifier: test.a
            command: ["/bin/true"]
            allowance: soon
            allowence: 30s
            retry: {initial: 1m, max: 30s}
            """)
        let r = try CLI.run(["check", box.jobs, "--json"])
        #expect(r.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
                                  "not JSON: \(r.stdout)")
        #expect(report["valid"] as? Bool == false)
        #expect((report["jobs"] as? [Any])?.isEmpty == true)
        let errors = try #require(report["errors"] as? [[String: Any]])
        #expect(errors.count == 3)
        for error in errors {
            #expect(Set(error.keys) == ["file", "line", "column", "field", "message"])
            #expect(error["file"] as? String == box.jobs + "/a.yaml")
        }
        let allowance = try #require(errors.first { ($0["message"] as? String)?.hasPrefix("allowance:") == true })
        #expect(allowance["field"] as? String == "allowance")
        #expect(allowance["line"] as? Int == 3)
        #expect(allowance["column"] as? Int == 12)
        #expect(allowance["message"] as? String == "allowance: expected a duration like 30s, 10m or 1h30m, found \"soon\"")
        let unknown = try #require(errors.first { ($0["message"] as? String)?.hasPrefix("unknown key") == true })
        #expect(unknown["field"] is NSNull)  // present, and null: not about one setting's value
        let retry = try #require(errors.first { ($0["message"] as? String)?.hasPrefix("retry.max:") == true })
        #expect(retry["field"] as? String == "retry.max")
    }

    @Test func jsonForAMissingFolderIsAnErrorObject() throws {
        let r = try CLI.run(["check", "/nonexistent/refreshd-jobs", "--json"])
        #expect(r.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(report["valid"] as? Bool == false)
        let errors = try #require(report["errors"] as? [[String: Any]])
        #expect(errors.count == 1)
        #expect(errors.first?["file"] as? String == "/nonexistent/refreshd-jobs")
        #expect(errors.first?["field"] is NSNull)
        #expect((errors.first?["message"] as? String)?.contains("does not exist") == true)
    }
}

/// Issue 35: `check` locates a bad `limits:` value as every error (file:line:column, the field
/// in `--json`), and `--json` shows a valid job's limits.
@Suite struct CheckLimitsTests {
    @Test func limitsAreLocatedAndShown() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nlimits: {memory: 256M, cpu: 150%, nice: 10}\n")
        let j = try CLI.run(["check", box.jobs, "--json"])
        #expect(j.status == 0, "\(j.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        let limits = try #require((report["jobs"] as? [[String: Any]])?.first?["limits"] as? [String: Any])
        #expect(limits["memory"] as? Int == 256 << 20 && limits["cpu"] as? Int == 150 && limits["nice"] as? Int == 10)
        #expect(limits["tasks"] == nil)

        try box.write("a.yaml", "identifier: test.a\ncommand: [\"/bin/true\"]\nlimits: {memory: 256MB}\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 1)
        #expect(r.stdout.contains("a.yaml:3:18: limits.memory: expected a size like 256M or 1G"), "\(r.stdout)")
        let e = try CLI.run(["check", box.jobs, "--json"])
        let error = try #require(((try JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])?["errors"] as? [[String: Any]])?.first)
        #expect(error["field"] as? String == "limits.memory" && error["line"] as? Int == 3 && error["column"] as? Int == 18)
    }
}
