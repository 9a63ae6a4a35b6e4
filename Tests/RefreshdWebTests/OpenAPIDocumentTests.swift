import Foundation
@testable import RefreshdDashboard
@testable import RefreshdWeb
import Testing

/// The OpenAPI document from one source (issue 37, item 5): every schema of a Codable type is
/// read off the type, so it has exactly the fields the type writes; the resource's words name
/// only fields that exist; every `$ref` resolves.
@Suite struct OpenAPIDocumentTests {
    static let built = OpenAPI.build()
    static var document: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(built.text.utf8))) as? [String: Any] ?? [:] }
    static var schemas: [String: Any] { (document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:] }

    @Test func theDocumentIsBuiltWithoutProblems() {
        #expect(Self.built.problems.isEmpty, "\(Self.built.problems.joined(separator: "\n"))")
        #expect(Self.document["openapi"] as? String == "3.1.0")
        #expect(Self.built.samples.count == OpenAPI.models.count)
    }

    /// Each model's value, every optional set, encoded as the API encodes it: each object in it
    /// has exactly the properties its schema lists (closed objects), and all the required ones.
    @Test func eachSchemaHasExactlyTheFieldsItsTypeWrites() throws {
        var mismatches: [String] = []
        for (name, data) in Self.built.samples.sorted(by: { $0.key < $1.key }) {
            let value = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            Self.compare(value, ["$ref": "#/components/schemas/\(name)"], at: name, schemas: Self.schemas, into: &mismatches)
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    /// A type grown by a field has it in its schema, required or not as the type says, with no
    /// edit anywhere else; and words for a field the type does not have are a problem.
    @Test func aFieldAddedToATypeIsInItsSchemaAndWordsForNoFieldAreAProblem() throws {
        struct Before: Codable { var a: Int }
        struct After: Codable { var a: Int; var added: String?; var more: [Int64] }
        let deriver = SchemaDeriver(names: [:])
        let before = try deriver.derive(Before.self).schema
        let after = try deriver.derive(After.self).schema
        #expect(Set((before["properties"] as? [String: Any] ?? [:]).keys) == ["a"])
        #expect(Set((after["properties"] as? [String: Any] ?? [:]).keys) == ["a", "added", "more"])
        #expect(after["required"] as? [String] == ["a", "more"])
        #expect(((after["properties"] as? [String: Any])?["more"] as? [String: Any])?["type"] as? String == "array")

        var problems: [String] = []
        _ = OpenAPI.merge(after, ["properties": ["added": ["description": "fine"], "gone": ["description": "no such field"]]],
                          at: "After", problems: &problems)
        #expect(problems == ["After.gone: the type has no such field"])
    }

    /// A page's object grown by a field that the resource does not describe: a problem, named.
    @Test func aFieldAddedToAPageWithoutItsDescriptionIsAProblem() {
        struct FailingJobGrown: Codable {
            var identifier: String
            var lastOutcome: String
            var lastRunID: Int64
            var retryStreak: Int
            var added: Bool
        }
        let pages = OpenAPI.pages.map { $0.name == "FailingJob" ? ($0.name, FailingJobGrown.self) : $0 }
        #expect(OpenAPI.build(pages: pages).problems == ["FailingJob.added: no description in CWebAssets/openapi.json"])
    }

    @Test func everyReferenceResolves() throws {
        var refs: [String] = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if let ref = object["$ref"] as? String { refs.append(ref) }
                object.values.forEach(walk)
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(Self.document)
        #expect(refs.count > 100)
        for ref in Set(refs) {
            var node: Any? = Self.document
            for part in ref.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] }
            #expect(node != nil, "\(ref) resolves to nothing")
        }
    }

    /// Walks an encoded value beside its schema (following `$ref`s into the components).
    static func compare(_ value: Any, _ schema: [String: Any], at path: String, schemas: [String: Any], into mismatches: inout [String]) {
        var schema = schema
        while let ref = schema["$ref"] as? String {
            schema = schemas[String(ref.split(separator: "/").last ?? "")] as? [String: Any] ?? [:]
        }
        if let object = value as? [String: Any] {
            if let properties = schema["properties"] as? [String: Any] {
                let written = Set(object.keys), listed = Set(properties.keys)
                if written != listed || schema["additionalProperties"] as? Bool != false {
                    mismatches.append("\(path): written \(written.sorted()), the schema lists \(listed.sorted()) (closed: \(schema["additionalProperties"] ?? "no"))")
                }
                let required = Set(schema["required"] as? [String] ?? [])
                if !required.isSubset(of: written) { mismatches.append("\(path): required \(required.subtracting(written).sorted()) not written") }
                for (key, item) in object {
                    if let property = properties[key] as? [String: Any] {
                        compare(item, property, at: "\(path).\(key)", schemas: schemas, into: &mismatches)
                    }
                }
            } else if let values = schema["additionalProperties"] as? [String: Any] {
                for (key, item) in object { compare(item, values, at: "\(path).\(key)", schemas: schemas, into: &mismatches) }
            } else if schema["oneOf"] == nil {
                mismatches.append("\(path): an object, the schema says \(schema)")
            }
        } else if let array = value as? [Any] {
            guard let items = schema["items"] as? [String: Any] else { return mismatches.append("\(path): an array, the schema says \(schema)") }
            for item in array { compare(item, items, at: "\(path)[]", schemas: schemas, into: &mismatches) }
        }
    }
}
