import Foundation
import RefreshdCalendar

/// Typed reads of job-file nodes that turn a wrong shape into a located "expected X, found Y" message.
///
/// Job files are read node by node rather than decoded with `Codable`, because `Codable` stops at
/// the first problem and loses the position of the value it could not read.
extension YAMLNode {
    /// Where the `column`-th character (1-based) of a scalar's text is in the file: quotes,
    /// escapes and line folding are accounted for by walking `source` (see `SourceText`).
    /// Anything but a scalar gives the node's own location.
    func location(ofTextColumn column: Int, in source: SourceText) -> Location {
        guard case .scalar(let scalar) = self else { return location }
        return source.location(ofTextColumn: column, in: scalar, at: scalar.location)
    }

    /// A short description of the node for "found ..." messages: the quoted text of a scalar,
    /// `nothing` for a null, `a list` or `a mapping` otherwise.
    var foundDescription: String {
        switch self {
        case .scalar(let scalar):
            if isNullScalar { return "nothing (null)" }
            return EchoText.quoted(scalar.string)
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// A plain `~`, `null` or empty value.
    var isNullScalar: Bool {
        guard case .scalar(let scalar) = self, scalar.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// The text of a non-null scalar. Numbers and booleans count as their source text, so
    /// `PORT: 8080` gives `"8080"`.
    var scalarText: String? {
        guard case .scalar(let scalar) = self, !isNullScalar else { return nil }
        return scalar.string
    }
}

/// Reads one setting's value, reporting problems under the setting's name.
struct ValueReader {
    /// The setting's dotted name for messages, e.g. `retry.initial`.
    let key: String
    let node: YAMLNode

    /// The scalar's text, or an error such as `namespace: expected a string, found a list`.
    ///
    /// Text holding NUL gives nil without a new error: the composer has reported it already.
    func string(_ sink: inout ErrorSink, expected: String = "a string") -> String? {
        if let text = node.scalarText { return text.hasNUL ? nil : text }
        sink.add(at: node.location, "\(key): expected \(expected), found \(node.foundDescription)")
        return nil
    }

    /// A duration, optionally required to be positive.
    func duration(_ sink: inout ErrorSink, positive: Bool) -> Duration? {
        guard let text = string(&sink, expected: "a duration like 30s, 10m or 1h30m") else { return nil }
        switch DurationParser.parse(text) {
        case .failure(let error):
            sink.add(at: node.location, "\(key): \(error)")
            return nil
        case .success(let duration):
            if positive, duration <= .zero {
                sink.add(at: node.location, "\(key): expected a duration greater than zero, found \(EchoText.quoted(text))")
                return nil
            }
            return duration
        }
    }

    /// One of `allowed`, or an error listing them.
    func oneOf(_ allowed: [String], _ sink: inout ErrorSink) -> String? {
        let expected = "one of " + allowed.joined(separator: ", ")
        guard let text = string(&sink, expected: expected) else { return nil }
        if allowed.contains(text) { return text }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// `true` or `false` (also `True`, `TRUE`, `False`, `FALSE`, as YAML's core schema spells them).
    func bool(_ sink: inout ErrorSink) -> Bool? {
        let expected = "true or false"
        guard let text = string(&sink, expected: expected) else { return nil }
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default:
            sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
            return nil
        }
    }

    /// An IANA time zone name such as `Europe/Paris` (or `UTC`), as Foundation knows them.
    func timeZone(_ sink: inout ErrorSink) -> TimeZone? {
        let expected = "an IANA time zone like Europe/Paris"
        guard let text = string(&sink, expected: expected) else { return nil }
        // Only the characters of IANA names reach Foundation: it reads the name as a C string
        // and caches zones, so "UTC\0x" would be taken for UTC.
        if Self.isZoneName(text), let zone = TimeZone(identifier: text) { return zone }
        let hint = Self.isZoneName(text) ? PlainWords.zoneHint(for: text).map { " (\($0))" } ?? "" : ""
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))\(hint)")
        return nil
    }

    /// `Europe/Paris`, `UTC`, `Etc/GMT+5`: 1 to 64 ASCII letters, digits and `/ _ - +`, no
    /// empty or `..` part (so no path outside the zone database).
    static func isZoneName(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "_"),
                 UInt8(ascii: "-"), UInt8(ascii: "+"):
                continue
            default:
                return false
            }
        }
        return text.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != ".." && $0 != "." }
    }

    /// A non-negative integer.
    func count(_ sink: inout ErrorSink) -> Int? {
        let expected = "a whole number 0 or greater"
        guard let text = string(&sink, expected: expected) else { return nil }
        if let value = Int(text), value >= 0, !text.hasPrefix("+") { return value }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// The mapping's pairs with scalar keys; unknown keys are reported with a suggestion.
    func mapping(known: [String], _ sink: inout ErrorSink) -> [(key: String, keyNode: YAMLNode, value: YAMLNode)]? {
        guard case .mapping(let mapping, _) = node else {
            sink.add(at: node.location, "\(key): expected a mapping with keys \(known.joined(separator: ", ")), found \(node.foundDescription)")
            return nil
        }
        return MappingReader.pairs(of: mapping, known: known, prefix: key + ".", &sink)
    }
}

extension String {
    /// Whether the text holds a NUL character (which C strings, and so exec, would cut at).
    var hasNUL: Bool { utf8.contains(0) }
}
