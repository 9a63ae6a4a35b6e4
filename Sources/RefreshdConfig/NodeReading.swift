import Foundation
import Yams

/// Typed reads of Yams nodes that turn a wrong shape into a located "expected X, found Y" message.
///
/// Job files are read node by node rather than decoded with `Codable`, because `Codable` stops at
/// the first problem and loses the position of the value it could not read.
extension Node {
    /// The node's position, 1-based (Yams adds 1 to libYAML's 0-based marks).
    var location: Location {
        guard let mark else { return .start }
        return Location(line: mark.line, column: mark.column)
    }

    /// Where the `column`-th character (1-based) of a scalar's text is in the file.
    ///
    /// A plain scalar's text starts at the node's mark, a quoted one's a column later (after the
    /// quote); inside single quotes each `''` before the character stands for one `'`. Block
    /// scalars (`|`, `>`) and text that spans lines give the node's own location. Escapes in
    /// double quotes (`\t`) are not undone, which only matters for text that contains them.
    func location(ofTextColumn column: Int) -> Location {
        guard case .scalar(let scalar) = self, let mark, column >= 1, !scalar.string.contains("\n") else { return location }
        let before = scalar.string.unicodeScalars.prefix(column - 1)
        switch scalar.style {
        case .plain, .any:
            return Location(line: mark.line, column: mark.column + column - 1)
        case .singleQuoted:
            let doubled = before.filter { $0 == "'" }.count
            return Location(line: mark.line, column: mark.column + column + doubled)
        case .doubleQuoted:
            return Location(line: mark.line, column: mark.column + column)
        case .literal, .folded:
            return location
        }
    }

    /// A short description of the node for "found ..." messages: the quoted text of a scalar,
    /// `nothing` for a null, `a list` or `a mapping` otherwise.
    var foundDescription: String {
        switch self {
        case .scalar(let scalar):
            if isNullScalar { return "nothing (null)" }
            return "\"\(scalar.string)\""
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        case .alias: return "an alias"
        }
    }

    /// A plain `~`, `null` or empty value.
    var isNullScalar: Bool {
        guard case .scalar(let scalar) = self, scalar.style == .plain || scalar.style == .any else { return false }
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
    let node: Node

    /// The scalar's text, or an error such as `namespace: expected a string, found a list`.
    func string(_ sink: inout ErrorSink, expected: String = "a string") -> String? {
        if let text = node.scalarText { return text }
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
                sink.add(at: node.location, "\(key): expected a duration greater than zero, found \"\(text)\"")
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
        sink.add(at: node.location, "\(key): expected \(expected), found \"\(text)\"")
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
            sink.add(at: node.location, "\(key): expected \(expected), found \"\(text)\"")
            return nil
        }
    }

    /// An IANA time zone name such as `Europe/Paris` (or `UTC`), as Foundation knows them.
    func timeZone(_ sink: inout ErrorSink) -> TimeZone? {
        let expected = "an IANA time zone like Europe/Paris"
        guard let text = string(&sink, expected: expected) else { return nil }
        if let zone = TimeZone(identifier: text) { return zone }
        sink.add(at: node.location, "\(key): expected \(expected), found \"\(text)\"")
        return nil
    }

    /// A non-negative integer.
    func count(_ sink: inout ErrorSink) -> Int? {
        let expected = "a whole number 0 or greater"
        guard let text = string(&sink, expected: expected) else { return nil }
        if let value = Int(text), value >= 0, !text.hasPrefix("+") { return value }
        sink.add(at: node.location, "\(key): expected \(expected), found \"\(text)\"")
        return nil
    }

    /// The mapping's pairs with scalar keys; unknown keys are reported with a suggestion.
    func mapping(known: [String], _ sink: inout ErrorSink) -> [(key: String, keyNode: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            sink.add(at: node.location, "\(key): expected a mapping with keys \(known.joined(separator: ", ")), found \(node.foundDescription)")
            return nil
        }
        return MappingReader.pairs(of: mapping, known: known, prefix: key + ".", &sink)
    }
}
