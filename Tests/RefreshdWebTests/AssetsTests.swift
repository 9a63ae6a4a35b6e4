import Foundation
@testable import RefreshdDashboard
@testable import RefreshdWeb
import Testing

/// The dashboard's files are compiled in by `CWebAssets` (C23's `#embed`): what the binary
/// serves is each file's bytes exactly, none cut, none added (no terminating NUL).
@Suite struct AssetsTests {
    /// `Sources/CWebAssets/NAME` of this checkout.
    static func file(_ name: String) throws -> Data {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try Data(contentsOf: root.appendingPathComponent("Sources/CWebAssets/\(name)"))
    }

    @Test func eachServedFileIsItsSourceByteForByte() throws {
        #expect(Data(Assets.script.utf8) == (try Self.file("dashboard.js")))
        #expect(Data(Assets.style.utf8) == (try Self.file("dashboard.css")))
        #expect(Data(Assets.favicon.utf8) == (try Self.file("favicon.svg")))
        #expect(Assets.openAPI == (try Self.file("openapi.json")))
        #expect(Assets.openAPI.count > 40_000 && Assets.openAPI.last != 0)
    }
}
