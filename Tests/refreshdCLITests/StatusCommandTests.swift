import Foundation
import Testing

@Suite(.serialized) struct StatusCommandTests {
    @Test func jsonHasPendingAndRunsWithOutcomes() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("ok.yaml", """
            identifier: test.ok
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1h}
            """)
        try box.write("fail.yaml", """
            identifier: test.fail
            kind: processing
            command: ["/bin/false"]
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        // Both runs ended: a run in flight is listed with the outcome `running`, and a SIGTERM
        // then would record it as interrupted.
        #expect(waitFor { box.runs().count == 2 && !box.runs().contains { $0.1 == "running" } })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let status = try #require(box.status())
        let pending = try #require(status["pending"] as? [[String: Any]])
        #expect(pending.map { $0["identifier"] as? String } == ["test.ok"])
        let outcomes = Dictionary(box.runs().map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(outcomes == ["test.ok": "success", "test.fail": "failure"])
        let text = try CLI.run(["status", "--state", box.state])
        #expect(text.stdout.contains("test.ok  processing  earliest"))
        #expect(text.stdout.contains("failure"))
    }

    @Test func missingStateIsAClearError() throws {
        let r = try CLI.run(["status", "--state", "/nonexistent/refreshd-state"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("/nonexistent/refreshd-state: the state directory does not exist"))
        let error = try #require(jsonError(["status", "--state", "/nonexistent/refreshd-state", "--json"]))
        #expect(error["kind"] as? String == "no-state")
        #expect(error["path"] as? String == "/nonexistent/refreshd-state")
    }

    /// Regression: a folder without state.sqlite, a state path that is a file, and a state.sqlite
    /// that is a directory were reported as "the file does not exist" and "disk I/O error".
    @Test func unusableStatePathsSayWhatIsWrong() throws {
        let box = Sandbox()
        defer { box.remove() }
        let fm = FileManager.default
        let file = box.root + "/plain-file"
        #expect(fm.createFile(atPath: file, contents: Data("x".utf8)))
        let empty = box.root + "/empty"
        try fm.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let directoryFile = box.root + "/dirfile"
        try fm.createDirectory(atPath: directoryFile + "/state.sqlite", withIntermediateDirectories: true)
        let cases: [(state: String, kind: String, path: String, text: String)] = [
            (file, "wrong-type", file, "\(file) cannot be used: it is a regular file, not a directory"),
            (file + "/sub", "wrong-type", file, "\(file) cannot be used: it is a regular file, not a directory"),
            (empty, "no-state", empty + "/state.sqlite", "the state directory has no state.sqlite"),
            (directoryFile, "wrong-type", directoryFile + "/state.sqlite",
             "state.sqlite cannot be used: it is a directory, not a regular file"),
        ]
        for c in cases {
            let r = try CLI.run(["status", "--state", c.state])
            #expect(r.status == 1)
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains(c.text), "\(c.state): \(r.stderr)")
            #expect(!r.stderr.contains("does not exist") && !r.stderr.contains("disk I/O"), "\(r.stderr)")
            let error = try #require(jsonError(["status", "--state", c.state, "--json"]))
            #expect(error["kind"] as? String == c.kind, "\(c.state)")
            #expect(error["path"] as? String == c.path, "\(c.state)")
            #expect((error["message"] as? String)?.contains(c.text) == true)
            #expect(error["detail"] is String)
        }
        #expect(!fm.fileExists(atPath: empty + "/state.sqlite"))  // status never creates state
    }

    /// Permission denied, with the path: run as `nobody` when the tests run as root (root
    /// bypasses file permissions), else directly.
    @Test(.enabled(if: Unprivileged.available, "needs a non-root user: setpriv and a binary nobody can run"))
    func unreadableStateSaysPermissionDeniedWithThePath() throws {
        let box = Sandbox()
        defer { box.remove() }
        let locked = box.root + "/locked"
        let lockedFile = box.root + "/locked-file"
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: lockedFile, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: lockedFile + "/state.sqlite", contents: Data()))
        chmod(box.root, 0o755)
        chmod(locked, 0)
        chmod(lockedFile + "/state.sqlite", 0)
        defer { chmod(locked, 0o700) }
        for (state, path) in [(locked, locked), (lockedFile, lockedFile + "/state.sqlite")] {
            let r = try CLI.run(["status", "--state", state], via: Unprivileged.prefix)
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("\(path) cannot be used: Permission denied"), "\(r.stderr)")
            #expect(!r.stderr.contains("does not exist"))
            let j = try CLI.run(["status", "--state", state, "--json"], via: Unprivileged.prefix)
            let object = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
            let error = try #require(object?["error"] as? [String: Any], "\(j.stdout)")
            #expect(error["kind"] as? String == "inaccessible")
            #expect(error["path"] as? String == path)
        }
    }

    /// `status --json`'s error object: `{"error": {...}}` on stdout, exit 1.
    private func jsonError(_ arguments: [String]) -> [String: Any]? {
        guard let r = try? CLI.run(arguments), r.status == 1,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              object.keys.sorted() == ["error"] else { return nil }
        return object["error"] as? [String: Any]
    }
}

/// Running the binary without root's power over file permissions.
enum Unprivileged {
    static let setpriv = "/usr/bin/setpriv"

    /// Empty when the tests already run as a normal user.
    static var prefix: [String] {
        getuid() == 0 ? [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"] : []
    }

    static var available: Bool {
        if getuid() != 0 { return true }
        guard access(setpriv, X_OK) == 0, getpwnam("nobody") != nil, getgrnam("nogroup") != nil else { return false }
        // `nobody` must be able to reach and run the binary.
        var path = CLI.binary
        while path.count > 1 {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & 0o001 != 0 else { return false }
            path = (path as NSString).deletingLastPathComponent
        }
        return true
    }
}
