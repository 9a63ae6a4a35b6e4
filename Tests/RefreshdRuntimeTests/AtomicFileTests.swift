import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing

@Suite struct AtomicFileTests {
    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "atomic-\(UInt64.random(in: 1...UInt64.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func writesReplacesAndLeavesNoTemporaryFile() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = "\(root)/widgets/wallpaper/systemSmall.json"
        try AtomicFile.write("{\"a\":1}", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"a\":1}")
        try AtomicFile.write("{\"a\":2}", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"a\":2}")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/widgets/wallpaper") == ["systemSmall.json"])
        try AtomicFile.remove(path)
        try AtomicFile.remove(path)  // already gone: fine
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A gated write (a cluster shard's publication) asks its gate after the data is on disk and
    /// before the rename: refused, the old file stays whole and no temporary file is left.
    @Test func aClosedGateLeavesTheOldFileAndNoTemporary() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try AtomicFile.write(Array("old".utf8), root: root, relative: "widgets/k/systemSmall.json", gate: { true })
        var asked = 0
        #expect(throws: AtomicFile.Failure.self) {
            try AtomicFile.write(Array("new".utf8), root: root, relative: "widgets/k/systemSmall.json", gate: { asked += 1; return false })
        }
        #expect(asked == 1)
        #expect(try String(contentsOfFile: root + "/widgets/k/systemSmall.json", encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/widgets/k") == ["systemSmall.json"])
        #expect(throws: AtomicFile.Failure.self) {
            try AtomicFile.remove(root: root, relative: "widgets/k/systemSmall.json", gate: { false })
        }
        #expect(FileManager.default.fileExists(atPath: root + "/widgets/k/systemSmall.json"))
    }

    @Test func aParentThatIsAFileIsAnErrorNamingThePath() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try AtomicFile.write("x", to: "\(root)/plain")
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.write("y", to: "\(root)/plain/child.json") }
        do {
            try AtomicFile.write("y", to: "\(root)/plain/child.json")
        } catch {
            #expect(error.description.contains("\(root)/plain"))
        }
    }

    @Test func publicationsStayInsideTheContainer() {
        #expect(Publication(path: "widgets/k/systemSmall.json", contents: "").isContained)
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "a/", "a\u{0}b"] {
            #expect(!Publication(path: bad, contents: nil).isContained, "\(bad)")
        }
    }

    /// A symlink planted at the temporary name refreshd used to write through
    /// (`.NAME.PID.tmp`, opened with O_CREAT|O_TRUNC) no longer redirects the write: temporary
    /// names are random and created with O_EXCL|O_NOFOLLOW.
    @Test func aSymlinkAtThePredictableTemporaryNameIsNotFollowed() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let victim = "\(root)/victim.txt"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(root)/shared/activities", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/shared/activities/.a.json.\(getpid()).tmp",
                                                   withDestinationPath: victim)
        try AtomicFile.write(Array("{}".utf8), root: "\(root)/shared", relative: "activities/a.json")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: "\(root)/shared/activities/a.json", encoding: .utf8) == "{}")
        // Only the planted link and the file: no temporary left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/shared/activities").count == 2)
    }

    /// A folder of the container that is a symlink (to another folder) is refused by name, and
    /// nothing is written or removed there.
    @Test func aSymlinkedFolderIsRefusedNamingIt() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let elsewhere = "\(root)/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try "theirs".write(toFile: "\(elsewhere)/a.json", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(root)/shared/widgets", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/shared/activities", withDestinationPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/shared/widgets/k", withDestinationPath: elsewhere)
        for relative in ["activities/a.json", "widgets/k/a.json"] {
            let folder = "\(root)/shared/" + relative.dropLast("/a.json".count)
            do {
                try AtomicFile.write(Array("{}".utf8), root: "\(root)/shared", relative: relative)
                Issue.record("\(relative) written through a symlink")
            } catch {
                #expect(error.path == folder && error.reason.hasPrefix("is a symlink; refusing to write through it"), "\(error)")
            }
            do {
                try AtomicFile.remove(root: "\(root)/shared", relative: relative)
                Issue.record("\(relative) removed through a symlink")
            } catch {
                #expect(error.path == folder, "\(error)")
            }
        }
        #expect(try String(contentsOfFile: "\(elsewhere)/a.json", encoding: .utf8) == "theirs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == ["a.json"])
    }
}
