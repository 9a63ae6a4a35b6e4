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
}
