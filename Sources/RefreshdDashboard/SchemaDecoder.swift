import Foundation

/// JSON Schemas read off Decodable types (issue 37, item 5): the type's own `init(from:)` runs
/// against a decoder that answers every question with a placeholder and writes down what was
/// asked: each key decoded is a property, `decode` a required one and `decodeIfPresent` (which
/// asks `decodeNil` first) an optional one, a nested container an object or an array, a
/// primitive its JSON type. So the document's schemas cannot miss a field the type has; a type
/// whose decoding cannot be answered with placeholders (it checks its text) is a `SchemaLeaf`
/// and gives its schema itself. Types with a component name are referred to (`$ref`), others
/// inlined. The value the run builds, every optional set, is what `OpenAPITests` encodes to
/// check that the schema also matches what is written.
struct SchemaDeriver {
    /// Types documented as components, by type: where a property of that type points.
    var names: [ObjectIdentifier: String]

    /// The schema of `T` and the placeholder value that decoding it built.
    func derive<T: Decodable>(_ type: T.Type) throws -> (schema: [String: Any], value: T) {
        let box = SchemaBox()
        let value = try T(from: SchemaDecoder(deriver: self, box: box, path: [], stack: [ObjectIdentifier(T.self)]))
        return (box.schema, value)
    }

    /// A value of `T` for a property at `path`, its schema written into `box`.
    func value<T: Decodable>(_ type: T.Type, into box: SchemaBox, path: [String], stack: [ObjectIdentifier]) throws -> T {
        if let leaf = T.self as? any SchemaLeaf.Type {
            box.schema = leaf.schemaLeaf
            return leaf.schemaPlaceholder as! T
        }
        if let map = T.self as? any StringKeyedMap.Type {
            let values = SchemaBox()
            _ = try value(map.valueType, into: values, path: path + ["*"], stack: stack)
            box.schema = ["type": "object", "additionalProperties": values.schema]
        }
        if let cases = Self.stringCases(T.self) {
            box.schema = ["type": "string", "enum": cases.map(\.raw)]
            return cases[0].value as! T
        }
        let id = ObjectIdentifier(T.self)
        guard !stack.contains(id) else { throw SchemaError(path: path, message: "\(T.self) contains itself") }
        let inner = SchemaBox()
        let made: T
        do {
            made = try T(from: SchemaDecoder(deriver: self, box: inner, path: path, stack: stack + [id]))
        } catch let error as SchemaError {
            throw error
        } catch {
            throw SchemaError(path: path, message: "\(T.self) cannot be decoded from placeholders (\(error)): make it a SchemaLeaf")
        }
        if let name = names[id] {
            box.schema = ["$ref": "#/components/schemas/\(name)"]
        } else if box.schema.isEmpty {
            box.schema = inner.schema
        }
        return made
    }

    /// A String enum's cases (raw value, value), when it lists them (`CaseIterable`).
    static func stringCases<T>(_ type: T.Type) -> [(raw: String, value: Any)]? {
        guard let iterable = T.self as? any CaseIterable.Type else { return nil }
        func all<E: CaseIterable>(_ e: E.Type) -> [Any] { e.allCases.map { $0 as Any } }
        func raw<R: RawRepresentable>(_ r: R) -> Any { r.rawValue }
        let cases = all(iterable).compactMap { value -> (raw: String, value: Any)? in
            guard let representable = value as? any RawRepresentable, let text = raw(representable) as? String else { return nil }
            return (text, value)
        }
        return cases.isEmpty ? nil : cases
    }
}

/// What decoding a type could not answer, with where.
struct SchemaError: Error, CustomStringConvertible {
    var path: [String]
    var message: String
    var description: String { (path.isEmpty ? "" : path.joined(separator: ".") + ": ") + message }
}

/// A type that says its own schema and gives a value, because its decoding reads text it checks
/// (an instant, a tagged union).
protocol SchemaLeaf {
    static var schemaLeaf: [String: Any] { get }
    static var schemaPlaceholder: Self { get }
}

/// `[String: V]`: an object whose properties are all V.
protocol StringKeyedMap {
    static var valueType: any Decodable.Type { get }
}

extension Dictionary: StringKeyedMap where Key == String, Value: Decodable {
    static var valueType: any Decodable.Type { Value.self }
}

extension String: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["type": "string"] }
    static var schemaPlaceholder: String { "x" }
}

extension Bool: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["type": "boolean"] }
    static var schemaPlaceholder: Bool { false }
}

extension Double: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["type": "number"] }
    static var schemaPlaceholder: Double { 1 }
}

extension Float: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["type": "number"] }
    static var schemaPlaceholder: Float { 1 }
}

/// Integers: unsigned ones are at least 0.
protocol IntegerSchemaLeaf: SchemaLeaf, FixedWidthInteger {}
extension IntegerSchemaLeaf {
    static var schemaLeaf: [String: Any] { Self.isSigned ? ["type": "integer"] : ["type": "integer", "minimum": 0] }
    static var schemaPlaceholder: Self { 1 }
}

extension Int: IntegerSchemaLeaf {}
extension Int8: IntegerSchemaLeaf {}
extension Int16: IntegerSchemaLeaf {}
extension Int32: IntegerSchemaLeaf {}
extension Int64: IntegerSchemaLeaf {}
extension UInt: IntegerSchemaLeaf {}
extension UInt8: IntegerSchemaLeaf {}
extension UInt16: IntegerSchemaLeaf {}
extension UInt32: IntegerSchemaLeaf {}
extension UInt64: IntegerSchemaLeaf {}

/// Where one decoding run writes its schema (a class: containers are values, and share it).
final class SchemaBox {
    var schema: [String: Any] = [:]
    /// Keys `decodeNil` was asked about: `decodeIfPresent`'s, so optional.
    var optional: Set<String> = []

    func add(_ key: String, _ property: [String: Any]) {
        var properties = schema["properties"] as? [String: Any] ?? [:]
        properties[key] = property
        schema["properties"] = properties
        if !optional.contains(key) {
            schema["required"] = (schema["required"] as? [String] ?? []) + [key]
        }
    }
}

struct SchemaDecoder: Decoder {
    var deriver: SchemaDeriver
    var box: SchemaBox
    var path: [String]
    var stack: [ObjectIdentifier]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if box.schema["type"] as? String != "object" || box.schema["properties"] == nil {
            box.schema = ["type": "object", "properties": [String: Any](), "additionalProperties": false]
        }
        return KeyedDecodingContainer(SchemaKeyedContainer(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        SchemaUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SchemaSingleContainer(decoder: self)
    }

    func value<T: Decodable>(_ type: T.Type, into box: SchemaBox, at key: String? = nil) throws -> T {
        try deriver.value(type, into: box, path: path + (key.map { [$0] } ?? []), stack: stack)
    }
}

struct SchemaKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    var decoder: SchemaDecoder
    var codingPath: [any CodingKey] { [] }
    /// None: a dictionary decoded here is empty (its schema is `StringKeyedMap`'s).
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        decoder.box.optional.insert(key.stringValue)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let property = SchemaBox()
        let value = try decoder.value(type, into: property, at: key.stringValue)
        decoder.box.add(key.stringValue, property.schema)
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(type, key) }

    /// The primitives go the generic way (the overloads above exist because the protocol asks).
    private func primitive<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T { try decode(type, forKey: key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw SchemaError(path: decoder.path + [key.stringValue], message: "a nested container: give the type a SchemaLeaf schema")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw SchemaError(path: decoder.path + [key.stringValue], message: "a nested container: give the type a SchemaLeaf schema")
    }

    func superDecoder() throws -> any Decoder { throw SchemaError(path: decoder.path, message: "superDecoder") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw SchemaError(path: decoder.path, message: "superDecoder") }
}

/// An array of one element, whose schema is the array's `items`.
struct SchemaUnkeyedContainer: UnkeyedDecodingContainer {
    var decoder: SchemaDecoder
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var isAtEnd: Bool { currentIndex >= 1 }
    var currentIndex = 0

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let items = SchemaBox()
        let value = try decoder.value(type, into: items, at: "[]")
        decoder.box.schema = ["type": "array", "items": items.schema]
        currentIndex += 1
        return value
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) }
    mutating func decode(_ type: String.Type) throws -> String { try primitive(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try primitive(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try primitive(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try primitive(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) }
    private mutating func primitive<T: Decodable>(_ type: T.Type) throws -> T { try decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw SchemaError(path: decoder.path, message: "a nested container: give the type a SchemaLeaf schema")
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SchemaError(path: decoder.path, message: "a nested container: give the type a SchemaLeaf schema")
    }

    mutating func superDecoder() throws -> any Decoder { throw SchemaError(path: decoder.path, message: "superDecoder") }
}

struct SchemaSingleContainer: SingleValueDecodingContainer {
    var decoder: SchemaDecoder
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.value(type, into: decoder.box)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) }
    func decode(_ type: String.Type) throws -> String { try primitive(type) }
    func decode(_ type: Double.Type) throws -> Double { try primitive(type) }
    func decode(_ type: Float.Type) throws -> Float { try primitive(type) }
    func decode(_ type: Int.Type) throws -> Int { try primitive(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) }
    private func primitive<T: Decodable>(_ type: T.Type) throws -> T { try decode(type) }
}
