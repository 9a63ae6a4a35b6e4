import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

@Suite struct JobDirectoryTests {
    private func load(_ files: [String: String], limits: SchedulerConfiguration = SchedulerConfiguration(),
                      check: (String, Result<[JobConfig], ConfigErrors>) -> Void) {
        TestSupport.withTemporaryDirectory { root in
            for (name, text) in files {
                TestSupport.write(text, to: "Jobs/" + name, in: root)
                // One modification time for all: a namespace clash then refuses the later file by name.
                try? FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)],
                                                       ofItemAtPath: root + "/Jobs/" + name)
            }
            check(root, JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath, limits: limits))
        }
    }

    private func job(_ identifier: String, _ extra: String = "") -> String {
        "identifier: \(identifier)\ncommand: [true]\n\(extra)"
    }

    @Test func loadsYamlAndYmlSortedByNameAndIgnoresTheRest() {
        load([
            "b.yml": job("com.example.b", "namespace: b\n"),
            "a.yaml": job("com.example.a"),
            "notes.txt": "not a job",
            ".hidden.yaml": "garbage: [",
            "nested/c.yaml": job("com.example.c", "namespace: c\n"),
        ]) { root, result in
            let jobs = (try? result.get()) ?? []
            #expect(jobs.map(\.identifier) == ["com.example.a", "com.example.b"])
            #expect(jobs.map(\.file) == [root + "/Jobs/a.yaml", root + "/Jobs/b.yml"])
            #expect(jobs.allSatisfy { $0.projectRoot == root })
        }
    }

    @Test func collectsAllErrorsOfAllFilesSortedByFileThenLine() {
        load([
            "c.yaml": "identifier: com.example.c\ncommand: [true]\nnamespace: c\ngrace: never\nkind: nope\n",
            "a.yaml": "identifier: bad\ncommand: []\n",
            "b.yaml": "- not a mapping\n",
            "d.yaml": job("com.example.d", "namespace: d\n"),
        ]) { root, result in
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            let located = errors.errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position)" }
            #expect(located == ["a.yaml:1:13", "a.yaml:2:10", "b.yaml:1:1", "c.yaml:4:8", "c.yaml:5:7"])
            #expect(errors.description.split(separator: "\n").count == 5)
            #expect(errors.description.hasPrefix(root + "/Jobs/a.yaml:1:13: identifier: expected a reverse-DNS name"))
        }
    }

    @Test func duplicateIdentifierIsReportedAtTheSecondFile() {
        load([
            "a.yaml": "# first\n" + job("com.example.same"),
            "b.yaml": "kind: processing\n" + job("com.example.same"),
        ]) { root, result in
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.count == 1)
            #expect(errors.errors.first?.description == "\(root)/Jobs/b.yaml:2:13: identifier: \"com.example.same\" "
                + "is already used by \(root)/Jobs/a.yaml:2; expected identifiers to be unique across the job folder")
        }
    }

    @Test func secondAppRefreshJobInANamespaceIsAnError() {
        load([
            "a.yaml": job("com.example.a"),
            "b.yaml": "identifier: com.example.b\nkind: app-refresh\ncommand: [true]\n",
            "c.yaml": job("com.example.c"),
            "d.yaml": job("com.example.d", "namespace: other\n"),
        ]) { root, result in
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position)" }
                == ["b.yaml:2:7", "c.yaml:1:13"])
            #expect(errors.errors.first?.message == "too many app-refresh jobs in namespace \"com.example\" (the default: "
                + "the identifier without its last label): com.example.b (\(root)/Jobs/b.yaml, this file) joins "
                + "com.example.a (\(root)/Jobs/a.yaml:1); at most 1 app-refresh request can be pending per namespace, "
                + "so these jobs would starve each other; expected kind: processing (longer work, up to 10 pending per "
                + "namespace), or a namespace: of its own (for example namespace: com.example.b)")
        }
    }

    @Test func elevenProcessingJobsInANamespaceIsAnError() {
        var files: [String: String] = [:]
        for index in 1...11 {
            files[String(format: "p%02d.yaml", index)] = "kind: processing\n" + job("com.example.p\(index)")
        }
        load(files) { _, result in
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.count == 1)
            #expect(errors.errors.first?.file.hasSuffix("p11.yaml") == true)
            #expect(errors.errors.first?.position == "1:7")
            #expect(errors.errors.first?.message.contains("at most 10 processing requests can be pending") == true)
        }
        files["p11.yaml"] = "kind: processing\nnamespace: more\n" + job("com.example.p11")
        load(files) { _, result in #expect((try? result.get())?.count == 11) }
    }

    @Test func limitsAreConfigurable() {
        load(["a.yaml": job("com.example.a"), "b.yaml": job("com.example.b")],
             limits: SchedulerConfiguration(maxPendingAppRefresh: 2)) { _, result in
            #expect((try? result.get())?.count == 2)
        }
    }

    @Test func missingDirectoryIsNamed() {
        TestSupport.withTemporaryDirectory { root in
            let result = JobDirectory.load(root + "/Nope", searchPath: nil)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.description == "\(root)/Nope:1:1: expected a folder of job files (*.yaml), "
                + "but the folder does not exist")
            TestSupport.write("x", to: "file", in: root)
            guard case .failure(let fileErrors) = JobDirectory.load(root + "/file", searchPath: nil) else {
                Issue.record("should fail"); return
            }
            #expect(fileErrors.errors.first?.message.hasPrefix("expected a folder of job files") == true)
        }
    }

    @Test func nonUTF8FileIsReported() {
        TestSupport.withTemporaryDirectory { root in
            let path = TestSupport.write("", to: "Jobs/latin1.yaml", in: root)
            _ = FileManager.default.createFile(atPath: path, contents: Data([0x69, 0x64, 0x3A, 0x20, 0xE9, 0xFF]))
            guard case .failure(let errors) = JobDirectory.load(root + "/Jobs", searchPath: nil) else {
                Issue.record("should fail"); return
            }
            // The first bad byte: 0xE9 starts a three-byte sequence that 0xFF does not continue.
            #expect(errors.description == path + ":1:5: expected UTF-8 text, found the byte 0xE9, which is not valid UTF-8 here")
        }
    }

    @Test func emptyDirectoryLoadsNoJobs() {
        TestSupport.withTemporaryDirectory { root in
            #expect((try? JobDirectory.load(root).get())?.isEmpty == true)
        }
    }

    @Test func projectRootIsTheAbsoluteParentOfARelativeFolder() {
        #expect(PathText.projectRoot(of: "/srv/app/Jobs/") == "/srv/app")
        #expect(PathText.projectRoot(of: "/srv/app/Jobs") == "/srv/app")
        let cwd = FileManager.default.currentDirectoryPath
        #expect(PathText.projectRoot(of: "Jobs") == (cwd as NSString).standardizingPath)
        #expect(PathText.join("Jobs/", "a.yaml") == "Jobs/a.yaml")
    }
}
