import Foundation
import Testing
@testable import RefreshdConfig

@Suite struct CommandResolverTests {
    /// A project with `Scripts/stage` (executable), `Scripts/notes.txt` (not executable),
    /// `bin/tool` (executable, for PATH) and a `Scripts/folder` directory.
    private func withProject<T>(_ body: (String) throws -> T) rethrows -> T {
        try TestSupport.withTemporaryDirectory { root in
            TestSupport.write("#!/bin/sh\nexit 0\n", to: "Scripts/stage", in: root, permissions: 0o755)
            TestSupport.write("notes\n", to: "Scripts/notes.txt", in: root, permissions: 0o644)
            TestSupport.write("#!/bin/sh\nexit 0\n", to: "bin/tool", in: root, permissions: 0o755)
            TestSupport.write("#!/bin/sh\n", to: "other/tool", in: root, permissions: 0o644)
            try? FileManager.default.createDirectory(atPath: root + "/Scripts/folder", withIntermediateDirectories: true)
            return try body(root)
        }
    }

    @Test func relativePathResolvesAgainstTheProjectRoot() {
        withProject { root in
            let resolver = CommandResolver(projectRoot: root, searchPath: nil)
            #expect(throws: Never.self) { try resolver.resolve("Scripts/stage").get() }
            #expect((try? resolver.resolve("Scripts/stage").get()) == root + "/Scripts/stage")
            #expect((try? resolver.resolve("./Scripts/stage").get()) == root + "/./Scripts/stage")
        }
    }

    @Test func absolutePathStays() {
        withProject { root in
            let resolver = CommandResolver(projectRoot: "/nowhere", searchPath: nil)
            #expect((try? resolver.resolve(root + "/Scripts/stage").get()) == root + "/Scripts/stage")
        }
    }

    @Test func bareNameIsSearchedInPathInOrder() {
        withProject { root in
            let resolver = CommandResolver(projectRoot: root, searchPath: "\(root)/other::\(root)/bin:/usr/bin")
            // other/tool is not executable, so bin/tool wins.
            #expect((try? resolver.resolve("tool").get()) == root + "/bin/tool")
        }
    }

    @Test func refusals() {
        withProject { root in
            let resolver = CommandResolver(projectRoot: root, searchPath: root + "/bin")
            func message(_ program: String) -> String {
                if case .failure(let problem) = resolver.resolve(program) { return problem.description }
                return "resolved"
            }
            #expect(message("Scripts/missing")
                == "command: \"Scripts/missing\" (\(root)/Scripts/missing) does not exist; expected an executable file")
            #expect(message("Scripts/notes.txt").hasSuffix("is not executable; expected an executable file (chmod +x)"))
            #expect(message("Scripts/folder").hasSuffix("is a directory; expected an executable file"))
            #expect(message("stage") == "command: \"stage\" was not found on PATH (searched \(root)/bin); "
                + "expected an executable in one of its directories, or a path such as Scripts/stage")
            #expect(message("").hasSuffix("found an empty string"))
            #expect(CommandResolver(projectRoot: root, searchPath: nil).resolve("tool").isFailure)
        }
    }

    @Test func jobFileErrorsPointAtTheProgram() {
        withProject { root in
            let yaml = """
                identifier: com.example.stage
                command:
                  - Scripts/notes.txt
                  - --day
                """
            let result = JobDirectory.parse(yaml: yaml, file: "Jobs/stage.yaml", projectRoot: root, searchPath: nil)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.map(\.position) == ["3:5"])
            #expect(errors.errors.first?.message.contains("is not executable") == true)

            let good = JobDirectory.parse(yaml: "identifier: a.b\ncommand: [Scripts/stage, --day, tomorrow]\n",
                                          file: "Jobs/a.yaml", projectRoot: root, searchPath: nil)
            #expect((try? good.get().command) == [root + "/Scripts/stage", "--day", "tomorrow"])
        }
    }

    /// Issue 36: `command: bin/fetch.sh --verbose` said the file `bin/fetch.sh --verbose` does
    /// not exist, and no more: the string names one program; the list form was meant.
    @Test func aCommandLineInAStringPointsAtTheListForm() {
        withProject { root in
            let result = JobDirectory.parse(yaml: "identifier: a.b\ncommand: bin/fetch.sh --verbose\n",
                                            file: "Jobs/a.yaml", projectRoot: root, searchPath: nil)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            let message = errors.errors.first?.message ?? ""
            #expect(message.hasPrefix("command: \"bin/fetch.sh --verbose\" ("), "\(message)")
            #expect(message.hasSuffix("; a string names one program, not a command line: for a program and its arguments "
                + "write the list command: [bin/fetch.sh, --verbose]"), "\(message)")
            // One word, or the list form: no such hint.
            let one = JobDirectory.parse(yaml: "identifier: a.b\ncommand: bin/fetch.sh\n", file: "Jobs/a.yaml", projectRoot: root, searchPath: nil)
            guard case .failure(let oneErrors) = one else { Issue.record("should fail"); return }
            #expect(oneErrors.errors.first?.message.contains("list") == false)
            #expect(SettingRules.commandLineWords("Scripts/x 'a b' --n=1") == ["Scripts/x", "\"'a\"", "\"b'\"", "--n=1"])
        }
    }

    @Test func temporaryProjectIsRemoved() throws {
        let root = withProject { $0 }
        #expect(!FileManager.default.fileExists(atPath: root))
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
