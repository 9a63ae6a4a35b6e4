import Foundation
import Testing

/// Issue 35: in a delegated cgroup subtree (what systemd gives a unit with `Delegate=yes`),
/// refreshd moves itself into the leaf `supervisor/` and each run lives in a cgroup of its own
/// beside it; `status` says so. The subtree is a real one made under the test's own cgroup and
/// marked delegated as systemd marks it (`trusted.delegate`): needs root and a writable cgroup2.
@Suite(.serialized) struct DelegatedCgroupTests {
    /// The cgroup2 mount point and the test's own cgroup directory in it, if root can make a
    /// delegated subtree there.
    static let base: (point: String, directory: String)? = {
        guard getuid() == 0,
              let mountinfo = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
              let own = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        let point = mountinfo.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "cgroup2",
                  fields[3] == "/" else { return nil }
            return String(fields[4])
        }.first
        guard let point, let line = own.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("0::/") }) else { return nil }
        let path = String(line.dropFirst(3))
        let directory = point + (path == "/" ? "" : path)
        return access(directory + "/cgroup.procs", W_OK) == 0 ? (point, directory) : nil
    }()

    @Test(.enabled(if: base != nil, "needs root and a writable cgroup2 hierarchy"))
    func runsAreSiblingsOfRefreshdsLeafInADelegatedSubtree() throws {
        let box = Sandbox()
        defer { box.remove() }
        let name = "refreshd-test-delegated-\(UUID().uuidString.prefix(8))"
        let (point, directory) = try #require(Self.base)
        let subtree = directory + "/" + name
        let inHierarchy = String(subtree.dropFirst(point.count))
        #expect(mkdir(subtree, 0o755) == 0)
        defer { Self.removeTree(subtree) }
        let marked = "1".withCString { Self.setxattr(subtree, "trusted.delegate", $0, 1, 0) }
        try #require(marked == 0, "cannot mark \(subtree) delegated: \(String(cString: strerror(errno)))")
        try box.write("where.yaml", """
            identifier: test.where
            kind: processing
            command: ["/bin/sh", "-c", "cat /proc/self/cgroup > \(box.root)/where.txt"]
            allowance: 1m
            """)
        // Started inside the subtree, as systemd starts a unit's main process in its cgroup.
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   via: ["/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", subtree])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.runs().map(\.1) == ["success"] }, "\(daemon.errors())")
        let home = try String(contentsOfFile: "/proc/\(daemon.pid)/cgroup", encoding: .utf8)
        #expect(home.contains("0::\(inHierarchy)/supervisor\n"), "refreshd's cgroup: \(home)")
        let run = (box.read("where.txt") ?? "").split(whereSeparator: \.isNewline).first { $0.hasPrefix("0::") } ?? ""
        #expect(run.hasPrefix("0::\(inHierarchy)/refreshd-") && run.hasSuffix("-run-1"), "the run's cgroup: \(run)")
        #expect(daemon.errors().contains("process tracking: a cgroup per run under \(subtree) (delegated \(subtree): refreshd in supervisor/, controllers "), "\(daemon.errors())")
        let status = try CLI.run(["status", "--state", box.state, "--json"])
        let tracking = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["processTracking"] as? [String: Any]
        #expect(tracking?["mode"] as? String == "cgroup")
        #expect(tracking?["cgroup"] as? String == subtree)
        #expect(tracking?["home"] as? String == subtree + "/supervisor")
        let text = try CLI.run(["status", "--state", box.state])
        #expect(text.stdout.contains("Process tracking: a cgroup per run under \(subtree) (delegated"), "\(text.stdout)")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        // The run's cgroup was removed at its end; only the leaf is left.
        let children = (try? FileManager.default.contentsOfDirectory(atPath: subtree))?.filter { $0.hasPrefix("refreshd-") } ?? []
        #expect(children.isEmpty, "\(children)")
    }

    /// setxattr(2), which no module this target imports declares.
    static let setxattr = unsafeBitCast(dlsym(dlopen(nil, RTLD_NOW), "setxattr"),
                                        to: (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer, Int, Int32) -> Int32).self)

    /// Removes the subtree and its child cgroups (killing anything left in them).
    static func removeTree(_ path: String) {
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        for child in children { removeTree(path + "/" + child) }
        for _ in 0..<100 {
            let procs = (try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? ""
            for pid in procs.split(whereSeparator: \.isNewline).compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
            if rmdir(path) == 0 || errno == ENOENT { return }
            usleep(10_000)
        }
    }
}
