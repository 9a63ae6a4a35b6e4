import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// What a new user trips on first (issue 21): a first job refused because of a shipped file, a
/// byte-order mark, errors across files hidden until each file's own are fixed, one file checked.
@Suite struct NewUserConfigTests {
    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The README's first job: `printf 'identifier: com.me.quick\ncommand: ["true"]\n...'`.
    static let quick = "identifier: com.me.quick\ncommand: [\"true\"]\nresubmit: {after: 10m}\n"

    /// Writes `files` into `root/Jobs` with the given modification times (seconds since the
    /// epoch; later is newer).
    private func write(_ files: [(name: String, text: String, modified: Int)], in root: String) throws {
        for file in files {
            TestSupport.write(file.text, to: "Jobs/" + file.name, in: root)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(file.modified))],
                                                  ofItemAtPath: root + "/Jobs/" + file.name)
        }
    }

    /// Regression: the first job of a user was refused, with the error at the shipped
    /// `Jobs/wallpaper-refresh.yaml` (both were app-refresh jobs in namespace `default`). Now
    /// each job's default namespace is its identifier's app, and the shipped jobs plus the new
    /// one load.
    @Test func aFirstJobBesideTheShippedOnesLoads() throws {
        try TestSupport.withTemporaryDirectory { root in
            try FileManager.default.copyItem(atPath: Self.project + "/Jobs", toPath: root + "/Jobs")
            try FileManager.default.copyItem(atPath: Self.project + "/Scripts", toPath: root + "/Scripts")
            TestSupport.write(Self.quick, to: "Jobs/quick.yaml", in: root)
            let jobs = try JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath, now: TestSupport.now).get()
            let namespaces = Dictionary(uniqueKeysWithValues: jobs.map { ($0.identifier, $0.definition.namespace) })
            #expect(namespaces["com.me.quick"] == "com.me")
            #expect(namespaces["design.example.wallpaper.refresh"] == "design.example.wallpaper")
            #expect(namespaces["design.example.dayparts"] == "design.example")
        }
    }

    /// Regression: a clash blamed the older (shipped) file. The newest file is refused, and the
    /// message names it, the other file and the ways out.
    @Test func aNamespaceClashBlamesTheNewFileAndNamesBoth() throws {
        try TestSupport.withTemporaryDirectory { root in
            try write([
                ("wallpaper-refresh.yaml", "identifier: com.me.refresh\ncommand: [true]\n", 1_700_000_000),
                ("another.yaml", "identifier: com.me.another\ncommand: [true]\n", 1_800_000_000),
            ], in: root)
            let result = JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath, now: TestSupport.now)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.count == 1)
            let error = try #require(errors.errors.first)
            #expect(error.file == root + "/Jobs/another.yaml" && error.position == "1:13")
            #expect(error.message == "too many app-refresh jobs in namespace \"com.me\" (the default: the identifier without "
                + "its last label): com.me.another (\(root)/Jobs/another.yaml, this file) joins com.me.refresh "
                + "(\(root)/Jobs/wallpaper-refresh.yaml:1); at most 1 app-refresh request can be pending per namespace, "
                + "so these jobs would starve each other; expected kind: processing (longer work, up to 10 pending per "
                + "namespace), or a namespace: of its own (for example namespace: com.me.another)")
        }
    }

    /// Regression: a duplicate identifier and a namespace clash showed only once each file's own
    /// errors were fixed. Every error comes in one pass.
    @Test func errorsAcrossFilesComeWithEachFilesOwnErrors() throws {
        try TestSupport.withTemporaryDirectory { root in
            try write([
                ("a.yaml", "identifier: com.me.a\ncommand: [true]\nallowance: soon\n", 1_700_000_000),
                ("b.yaml", "identifier: com.me.a\ncommand: [true]\nnamespace: b\ngrace: never\n", 1_700_000_001),
                ("c.yaml", "identifier: com.me.c\ncommand: [true]\njitter: lots\n", 1_700_000_002),
                // Misspelt and invalid kinds or namespaces are not guessed: no clash claimed for them.
                ("d.yaml", "identifier: com.me.d\ncommand: [true]\nknd: processing\n", 1_700_000_003),
                ("e.yaml", "identifier: com.me.e\ncommand: [true]\nkind: nightly\n", 1_700_000_004),
            ], in: root)
            let result = JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath, now: TestSupport.now)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            let found = errors.errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position) \($0.message.prefix(24))" }
            #expect(found == [
                "a.yaml:3:12 allowance: expected a du",
                "b.yaml:1:13 identifier: \"com.me.a\" i",
                "b.yaml:4:8 grace: expected a durati",
                "c.yaml:1:13 too many app-refresh job",
                "c.yaml:3:9 jitter: expected a durat",
                "d.yaml:3:1 unknown key \"knd\" (did y",
                "e.yaml:3:7 kind: expected one of ap",
            ])
        }
    }

    /// Regression: a UTF-8 byte-order mark was refused ("did not find expected <document start>").
    @Test func aByteOrderMarkIsAccepted() throws {
        try TestSupport.withTemporaryDirectory { root in
            TestSupport.write("\u{FEFF}identifier: com.me.bom\ncommand: [true]\nallowance: 1m\n", to: "Jobs/bom.yaml", in: root)
            let jobs = try JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath, now: TestSupport.now).get()
            #expect(jobs.map(\.identifier) == ["com.me.bom"])
        }
        // Locations on the first line are as an editor shows them (the mark is invisible).
        let error = TestSupport.onlyError("\u{FEFF}identifier: x\ncommand: [true]\n")
        #expect(error?.position == "1:13")
    }

    /// One file checked on its own, against the other files of its folder as if it were new.
    @Test func oneFileIsCheckedAgainstItsFolder() throws {
        try TestSupport.withTemporaryDirectory { root in
            try write([
                ("a.yaml", "identifier: com.me.a\ncommand: [true]\n", 1_900_000_000),
                ("broken.yaml", "identifier: [\n", 1_700_000_000),
                ("b.yaml", "identifier: com.me.b\ncommand: [true]\n", 1_700_000_000),
            ], in: root)
            // b is older than a, but it is the file being checked: it is the one refused.
            let result = JobDirectory.load(file: root + "/Jobs/b.yaml", searchPath: TestSupport.searchPath, now: TestSupport.now)
            guard case .failure(let errors) = result else { Issue.record("should fail"); return }
            #expect(errors.errors.map(\.file) == [root + "/Jobs/b.yaml"])  // not broken.yaml's syntax error
            #expect(errors.errors.first?.message.contains("com.me.b (\(root)/Jobs/b.yaml, this file) joins com.me.a") == true)
            TestSupport.write("identifier: com.other.c\ncommand: [true]\n", to: "Jobs/c.yaml", in: root)
            let alone = try JobDirectory.load(file: root + "/Jobs/c.yaml", searchPath: TestSupport.searchPath,
                                              now: TestSupport.now).get()
            #expect(alone.map(\.identifier) == ["com.other.c"])
        }
    }
}
