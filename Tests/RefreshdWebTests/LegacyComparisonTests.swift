import Foundation
@testable import RefreshdWeb
import Testing

/// Temporary: the resources against the Swift strings they replace (removed with them).
@Suite struct LegacyComparisonTests {
    @Test func assetsAreByteIdentical() {
        #expect(Array(Assets.script.utf8) == Array(AssetsLegacy.script.utf8))
        #expect(Array(Assets.style.utf8) == Array(AssetsLegacy.style.utf8))
        #expect(Array(Assets.favicon.utf8) == Array(AssetsLegacy.favicon.utf8))
    }

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test func sameEndpointsAndComponents() {
        let new = Self.object(OpenAPI.document), old = Self.object(OpenAPILegacy.document)
        func operations(_ d: [String: Any]) -> [String] {
            (d["paths"] as? [String: Any] ?? [:]).flatMap { path, item in
                (item as? [String: Any] ?? [:]).map { method, op in
                    "\(method) \(path) \(((op as? [String: Any])?["responses"] as? [String: Any] ?? [:]).keys.sorted())"
                }
            }.sorted()
        }
        #expect(operations(new) == operations(old))
        #expect(operations(new).count > 20)
        let newNames = Set(((new["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]).keys)
        let oldNames = Set(((old["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]).keys)
        #expect(newNames == oldNames)
    }

    /// The field-set check on the hand-written document: what it had missed.
    @Test func theHandWrittenDocumentFailsTheFieldSetCheck() {
        let old = Self.object(OpenAPILegacy.document)
        let schemas = (old["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        var mismatches: [String] = []
        for (name, data) in OpenAPI.build().samples.sorted(by: { $0.key < $1.key }) {
            let value = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) ?? [:]
            OpenAPIDocumentTests.compare(value, ["$ref": "#/components/schemas/\(name)"], at: name, schemas: schemas, into: &mismatches)
        }
        print("LEGACY MISMATCHES \(mismatches.count):\n" + mismatches.joined(separator: "\n"))
        #expect(!mismatches.isEmpty)
    }
}
