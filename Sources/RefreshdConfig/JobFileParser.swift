import Foundation
import RefreshdCore
import Yams

/// Reads one job file's YAML into a `ParsedJob`, collecting every problem in the file.
///
/// Parsing goes setting by setting over Yams' node tree, so each problem is reported at the
/// value that caused it and the rest of the file is still checked. A file with any error
/// produces no job; cross-file rules (unique identifiers, namespace limits) live in
/// `JobSetValidator`.
struct JobFileParser {
    /// Every top-level setting, in the order the documentation lists them.
    static let keys = ["identifier", "kind", "command", "earliest", "allowance", "grace",
                       "resubmit", "retry", "requires", "namespace", "environment",
                       "timezone", "missed", "catch-up", "jitter", "fixed-jitter", "accuracy"]

    let file: String
    let projectRoot: String
    let searchPath: String?
    /// When the file is loaded: calendar expressions must elapse after it.
    let now: Instant
    /// The zone of calendar expressions in jobs without `timezone:`.
    let defaultTimeZone: TimeZone

    /// The job, or nil with the errors that prevent it.
    func parse(yaml: String) -> (job: ParsedJob?, errors: [ConfigError]) {
        var sink = ErrorSink(file: file)
        let root: Node?
        do {
            // Scalars are read as their source text, so no tag resolution is needed: the regex-free
            // basic resolver and an explicit encoding (the default reads the whole environment on
            // every call) make `check` on 10,000 files several times faster.
            root = try Yams.compose(yaml: yaml, .basic, .default, .utf8)
        } catch let error as YamlError {
            sink.add(at: YAMLErrorLocator.location(of: error, in: yaml), YAMLErrorLocator.message(for: error))
            return (nil, sink.errors)
        } catch {
            sink.add(at: .start, "invalid YAML: \(error)")
            return (nil, sink.errors)
        }
        guard let root, !root.isNullScalar else {
            sink.add(at: .start, "expected a mapping of job settings (identifier:, command:, ...), found an empty file")
            return (nil, sink.errors)
        }
        guard case .mapping(let mapping) = root else {
            sink.add(at: root.location,
                     "expected a mapping of job settings (identifier:, command:, ...), found \(root.foundDescription)")
            return (nil, sink.errors)
        }
        var settings = JobSettings(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                   now: now, defaultTimeZone: defaultTimeZone)
        let pairs = MappingReader.pairs(of: mapping, known: Self.keys, prefix: "", &sink)
        for pair in pairs {
            settings.read(key: pair.key, keyNode: pair.keyNode, value: pair.value, &sink)
        }
        settings.resolveCalendars(&sink)
        settings.checkConsistency(mappingLocation: mapping.mark.map { Location(line: $0.line, column: $0.column) } ?? .start,
                                  &sink)
        guard sink.errors.isEmpty, let job = settings.job() else { return (nil, sink.errors) }
        return (job, [])
    }
}

/// Turns Yams' `YamlError` into a location and a message in the loader's style.
enum YAMLErrorLocator {
    static func location(of error: YamlError, in yaml: String) -> Location {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return Location(line: mark.line, column: mark.column)
        case .reader(_, let offset, _, _):
            return offset.map { location(ofUTF8Offset: $0, in: yaml) } ?? .start
        case .duplicatedKeysInMapping(let duplicates, let context):
            let first = Location(line: context.mark.line, column: context.mark.column)
            guard let key = duplicates.first else { return first }
            return secondOccurrence(of: key, after: first, in: yaml) ?? first
        default:
            return .start
        }
    }

    static func message(for error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
             .composer(let context, let problem, _, _):
            let found = problem.hasPrefix("but ") ? String(problem.dropFirst(4)) : problem
            let hint = problem.contains("another document") ? "; a job file holds one job (one document)" : ""
            guard let context else { return "invalid YAML: \(found)\(hint)" }
            return "invalid YAML: \(context.text) (line \(context.mark.line), column \(context.mark.column)): \(found)\(hint)"
        case .reader(let problem, _, _, _):
            return "invalid YAML: \(problem)"
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "\"\($0)\"" }.joined(separator: ", ")
            return "duplicate key\(duplicates.count == 1 ? "" : "s") \(names) (first at line \(context.mark.line)); each key may appear only once in a mapping"
        case .dataCouldNotBeDecoded:
            return "expected UTF-8 text, found bytes that are not"
        default:
            return "invalid YAML: \(error)"
        }
    }

    /// The line and column of a UTF-8 byte offset.
    static func location(ofUTF8Offset offset: Int, in yaml: String) -> Location {
        var line = 1, column = 1, bytes = 0
        for scalar in yaml.unicodeScalars {
            if bytes >= offset { break }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            bytes += UTF8.width(scalar)
        }
        return Location(line: line, column: column)
    }

    /// Yams points at the first of two equal keys; the error belongs at the second. Looks for a
    /// later line with `key:` at the same column (block mappings); nil when not found (flow style).
    static func secondOccurrence(of key: String, after first: Location, in yaml: String) -> Location? {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard first.line >= 1, first.line <= lines.count else { return nil }
        for lineIndex in first.line..<lines.count {
            let scalars = Array(lines[lineIndex].unicodeScalars)
            let start = first.column - 1
            guard start < scalars.count,
                  scalars[..<start].allSatisfy({ $0 == " " || $0 == "-" }) else { continue }
            let rest = String(String.UnicodeScalarView(scalars[start...]))
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where rest.hasPrefix(spelling) {
                let after = rest.dropFirst(spelling.count).drop(while: { $0 == " " })
                if after.hasPrefix(":") { return Location(line: lineIndex + 1, column: first.column) }
            }
        }
        return nil
    }
}
