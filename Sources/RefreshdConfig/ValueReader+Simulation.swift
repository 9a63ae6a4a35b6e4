import Foundation
import RefreshdCore

/// Typed reads for `simulate:` blocks and scenario files: weights, lines of text, JSON object
/// lines, whole numbers in a range, instants of a simulation, signed durations, times of day.
extension ValueReader {
    /// A weight: a plain decimal number 0 or greater, like `0.9`, `1` or `90`.
    func weight(_ sink: inout ErrorSink) -> Double? {
        let expected = "a number 0 or greater, like 0.9 or 1"
        guard let text = string(&sink, expected: expected) else { return nil }
        let digits = text.utf8.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
        let dots = text.utf8.filter { $0 == UInt8(ascii: ".") }.count
        if digits > 0, dots <= 1, digits + dots == text.utf8.count, let value = Double(text), value.isFinite {
            return value
        }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// One line of text: no line break, no control character (tab, escape, bidi override...).
    func line(_ sink: inout ErrorSink, expected: String = "one line of text") -> String? {
        guard let text = string(&sink, expected: expected) else { return nil }
        guard !EchoText.isClean(text) else { return text }
        let breaks: Set<Unicode.Scalar> = ["\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"]
        if text.unicodeScalars.contains(where: { breaks.contains($0) }) {
            sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text)), which has a line break")
            return nil
        }
        if text.unicodeScalars.contains(where: EchoText.needsEscape) {
            sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text)), which has a control character")
            return nil
        }
        return text
    }

    /// A list of lines (or a single line): each one line of text, and with `jsonObjects` each a
    /// JSON object such as `{"entries": []}`.
    func lines(_ sink: inout ErrorSink, jsonObjects: Bool = false) -> [String]? {
        let expected = jsonObjects ? "a JSON object on one line, like '{\"entries\": []}'" : "one line of text"
        let items: [YAMLNode]
        switch node {
        case .sequence(let sequence, _): items = sequence
        case .mapping:
            sink.add(at: node.location, "\(key): expected a list of lines like [\(jsonObjects ? "'{\"entries\": []}'" : "\"fetched 12 images\"")], "
                + "found a mapping\(jsonObjects ? " (quote each JSON object: YAML reads {...} as a mapping)" : "")")
            return nil
        case .scalar: items = [node]
        }
        var lines: [String] = []
        var valid = true
        for item in items {
            let reader = ValueReader(key: key, node: item)
            if jsonObjects, case .mapping = item {
                sink.add(at: item.location, "\(key): expected \(expected), found a mapping "
                    + "(quote each JSON object: YAML reads {...} as a mapping)")
                valid = false
                continue
            }
            guard let text = reader.line(&sink, expected: expected) else {
                valid = false
                continue
            }
            if jsonObjects, let problem = Self.jsonObjectProblem(text) {
                sink.add(at: item.location, "\(key): expected \(expected), found \(EchoText.quoted(text)) (\(problem))")
                valid = false
                continue
            }
            lines.append(text)
        }
        return valid ? lines : nil
    }

    /// Deepest nesting accepted in a results line, checked before the JSON parser sees it.
    static let maximumJSONDepth = 64

    /// Why `text` is not a JSON object, or nil when it is one.
    static func jsonObjectProblem(_ text: String) -> String? {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for byte in text.utf8 {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        if deepest > maximumJSONDepth { return "nested more than \(maximumJSONDepth) levels deep" }
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
            return "not valid JSON"
        }
        if value is [String: Any] { return nil }
        if value is [Any] { return "a JSON array, not an object" }
        return "a JSON value that is not an object"
    }

    /// A whole number in `range`.
    func integer(in range: ClosedRange<Int>, _ sink: inout ErrorSink, expected: String? = nil) -> Int? {
        let expected = expected ?? "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let text = string(&sink, expected: expected) else { return nil }
        if !text.hasPrefix("+"), let value = Int(text), range.contains(value) { return value }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// A seed: a whole number from 0 to 18446744073709551615.
    func seed(_ sink: inout ErrorSink) -> UInt64? {
        let expected = "a whole number from 0 to \(UInt64.max)"
        guard let text = string(&sink, expected: expected) else { return nil }
        if !text.hasPrefix("+"), let value = UInt64(text) { return value }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    static let instantExpectation = "+DURATION after the start (like +1d2h) or an ISO 8601 date with offset (like 2026-11-23T04:00:00Z)"

    /// `+1d2h` (after the simulation's start) or an ISO 8601 date with an offset.
    func simulationTime(_ sink: inout ErrorSink) -> SimulationTime? {
        guard let text = string(&sink, expected: Self.instantExpectation) else { return nil }
        if text.hasPrefix("+") {
            switch DurationParser.parse(String(text.dropFirst())) {
            case .success(let duration): return .afterStart(duration)
            case .failure(let error):
                let detail = error.detail.map { " (\($0))" } ?? ""
                sink.add(at: node.location, "\(key): expected \(Self.instantExpectation), found \(EchoText.quoted(text))\(detail)")
                return nil
            }
        }
        switch ISODateParser.parse(text) {
        case .success(let instant): return .at(instant)
        case .failure(let problem):
            let detail = EarliestSpec.looksLikeISODateTime(text) ? " (\(problem))" : ""
            sink.add(at: node.location, "\(key): expected \(Self.instantExpectation), found \(EchoText.quoted(text))\(detail)")
            return nil
        }
    }

    /// An ISO 8601 date with an offset.
    func date(_ sink: inout ErrorSink) -> Instant? {
        let expected = "an ISO 8601 date with offset like 2026-11-23T00:00:00Z"
        guard let text = string(&sink, expected: expected) else { return nil }
        switch ISODateParser.parse(text) {
        case .success(let instant): return instant
        case .failure(let problem):
            sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text)) (\(problem))")
            return nil
        }
    }

    /// A duration with an optional sign: `-1h` (back), `+30m` or `30m` (forward); not zero.
    func signedDuration(_ sink: inout ErrorSink) -> Duration? {
        let expected = "a duration with an optional sign, like -1h or +30m"
        guard let text = string(&sink, expected: expected) else { return nil }
        let negative = text.hasPrefix("-")
        let magnitude = negative || text.hasPrefix("+") ? String(text.dropFirst()) : text
        switch DurationParser.parse(magnitude) {
        case .success(let duration) where duration != .zero:
            return negative ? .zero - duration : duration
        case .success:
            sink.add(at: node.location, "\(key): expected a step other than zero, found \(EchoText.quoted(text))")
        case .failure(let error):
            let detail = error.detail.map { " (\($0))" } ?? ""
            sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))\(detail)")
        }
        return nil
    }

    /// `HH:MM` (00:00 to 23:59; `7:00` too) as minutes after midnight.
    func timeOfDay(_ sink: inout ErrorSink) -> Int? {
        let expected = "a time of day like \"22:00\" (HH:MM, 00:00 to 23:59)"
        guard let text = string(&sink, expected: expected) else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
           parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
           let hour = Int(parts[0]), let minute = Int(parts[1]), hour < 24, minute < 60 {
            return hour * 60 + minute
        }
        sink.add(at: node.location, "\(key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }
}
