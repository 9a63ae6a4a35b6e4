import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// Commands are started by refreshd itself as `posix_spawn` starts them (issue 35: no copy of
/// refreshd's page tables at each run), no longer by libuv's `uv_spawn` (fork, then execvp):
/// what execvp did for a command, the spawn still does; and a run with a cgroup is born in it.
@Suite(.serialized) struct CommandSpawnTests {
    /// Writes an executable (or not) file.
    static func write(_ path: String, _ text: String, mode: mode_t = 0o755) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
    }

    /// A bare program name is looked up in the PATH the command will get (not refreshd's), as
    /// execvp did: the first executable file, EACCES if only a file that may not be executed
    /// was found, ENOENT if none; `/bin:/usr/bin` without a PATH; a relative entry from the
    /// command's working directory; a name with a `/` as given.
    @Test func aBareNameIsLookedUpInTheCommandsPath() throws {
        let directory = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bin = directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin + "/folder", withIntermediateDirectories: true)
        try Self.write(bin + "/tool", "#!/bin/sh\n")
        try Self.write(bin + "/plain", "#!/bin/sh\n", mode: 0o644)
        func resolve(_ file: String, _ path: String?, in workingDirectory: String? = nil) -> CommandProcess.Resolved {
            CommandProcess.resolve(file, environment: ["A=1"] + (path.map { ["PATH=\($0)"] } ?? []),
                                   workingDirectory: workingDirectory)
        }
        #expect(resolve("tool", "/nonexistent:\(bin)") == .found("\(bin)/tool"))
        #expect(resolve("tool", "/usr/bin:/bin") == .missing(ENOENT))
        #expect(resolve("plain", bin) == .missing(EACCES))
        #expect(resolve("folder", bin) == .missing(ENOENT))
        #expect(resolve("sh", nil) == .found("/bin/sh"))
        #expect(resolve("tool", "bin", in: directory) == .found("bin/tool"))
        #expect(resolve("tool", "bin") == .missing(ENOENT))
        #expect(resolve("./anything", nil) == .found("./anything"))
        #expect(resolve("", bin) == .missing(ENOENT))
    }

    /// Against a real loop: a script without a `#!` line runs through /bin/sh (execvp's
    /// fallback for ENOEXEC), and a bare name runs from the PATH in the job's environment, in
    /// the job's working directory, with nothing on its stdin.
    @Test func aScriptWithoutAnInterpreterLineAndABareNameFromTheJobsPathRun() throws {
        let directory = TempDirectory.make()
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
        try Self.write(directory + "/plain-script", "echo \"plain script ran with $1\"\n")
        try Self.write(directory + "/bin/tool", "#!/bin/sh\necho \"tool ran in $(pwd), stdin [$(cat)]\"\n")
        let h = try LoopHarness(directory: directory) { s in
            s.register(TaskDefinition(identifier: "t.script", kind: .processing),
                       command: CommandJob(argv: [directory + "/plain-script", "an-argument"]))
            s.register(TaskDefinition(identifier: "t.tool", kind: .processing),
                       command: CommandJob(argv: ["tool"], environment: ["PATH": directory + "/bin"],
                                           workingDirectory: directory + "/bin"))
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.script", kind: .processing))
        try h.scheduler.submit(TaskRequest(identifier: "t.tool", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.script"] == [.success] && h.outcomes()["t.tool"] == [.success] },
                "\(h.lines.all)")
        #expect(h.stop())
        #expect(h.lines.contains("plain script ran with an-argument"), "\(h.lines.all)")
        #expect(h.lines.contains("tool ran in \(directory)/bin, stdin []"), "\(h.lines.all)")
    }

    /// A command with a run cgroup is in it from its first instruction (clone3's
    /// `CLONE_INTO_CGROUP`), even in an embedded scheduler, which moved it in only after the
    /// spawn (after its exec: `cat` could read its old cgroup), and no thread of refreshd's
    /// entered the run's cgroup for it.
    @Test(.enabled(if: RunLimitsTests.runCgroupsAvailable, "needs a writable cgroup2 hierarchy (a cgroup per run)"))
    func aCommandIsBornInItsRunsCgroup() throws {
        let names = ["t.where1", "t.where2", "t.where3"]
        let h = try LoopHarness { s in
            for name in names {
                s.register(TaskDefinition(identifier: name, kind: .processing),
                           command: CommandJob(argv: ["/bin/cat", "/proc/self/cgroup"]))
            }
        }
        defer { h.removeDirectory() }
        let home = try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)
        for name in names { try h.scheduler.submit(TaskRequest(identifier: name, kind: .processing)) }
        h.start()
        #expect(h.wait { names.allSatisfy { h.outcomes()[$0] == [.success] } }, "\(h.lines.all)")
        #expect(h.stop())
        // Each run's line: `t.whereN[<run>] stdout: 0::/refreshd-<instance>-run-<a run>` (a run
        // cgroup is named for the run it was made for and kept for later ones: `RunCgroupPool`).
        let seen = h.lines.all.filter { $0.contains("] stdout: 0::/") }
        #expect(seen.count == 3, "\(h.lines.all)")
        for line in seen {
            #expect(line.range(of: #"stdout: 0::/refreshd-.*-run-\d+$"#, options: .regularExpression) != nil, "\(line)")
        }
        #expect(try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) == home)
    }
}
