internal import CLibYAML

/// Turns a libyaml error into a located message in refreshd's words.
///
/// libyaml describes what its grammar expected (`mapping values are not allowed in this
/// context`); the usual causes in a hand-written job file are a tab, a line indented too far or
/// not far enough, and `: ` inside a plain value. Those are recognised from the source line and
/// named; anything else keeps libyaml's wording under `invalid YAML:`.
enum YAMLSyntaxMessage {
    static func failure(of parser: yaml_parser_t, in source: String) -> YAMLComposer.Failure {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown error"
        let context = parser.context.map { String(cString: $0) }
        let problemMark = Location(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
        let contextMark = Location(line: Int(parser.context_mark.line) + 1, column: Int(parser.context_mark.column) + 1)
        if parser.error == YAML_READER_ERROR {
            let location = SourceText.location(ofUTF8Offset: Int(parser.problem_offset), in: source)
            var message = "invalid YAML: \(problem)"
            if parser.problem_value >= 0, let scalar = Unicode.Scalar(UInt32(parser.problem_value)) {
                message += ", found \(EchoText.escaped(String(scalar)))"
                if problem.contains("control characters") { message += "; expected printable text (write \\t or \\n inside double quotes)" }
            }
            return YAMLComposer.Failure(location: location, message: message)
        }
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        func line(_ number: Int) -> Substring? { number >= 1 && number <= lines.count ? lines[number - 1] : nil }
        func indentation(_ text: Substring) -> Int { text.prefix(while: { $0 == " " }).count }

        // A tab in a line's indentation: YAML forbids it, whatever libyaml complains about.
        for number in [problemMark.line, contextMark.line] {
            guard let text = line(number) else { continue }
            let leading = text.prefix(while: { $0 == " " || $0 == "\t" })
            if let tab = leading.firstIndex(of: "\t") {
                return YAMLComposer.Failure(
                    location: Location(line: number, column: text.distance(from: text.startIndex, to: tab) + 1),
                    message: "invalid YAML: found a tab in the indentation; expected spaces (YAML forbids tabs for indentation)")
            }
        }
        if problem.contains("tab character") {
            return YAMLComposer.Failure(location: problemMark,
                                        message: "invalid YAML: found a tab where YAML expects indentation; expected spaces (YAML forbids tabs for indentation)")
        }
        if problem.hasPrefix("Maximum nesting level") {
            // A libyaml with a nesting limit of its own (after 0.2.5; Debian has 0.2.5) counts the
            // brackets it has scanned ahead, so it stops at the first one.
            return YAMLComposer.Failure(location: problemMark, message: "values are nested more than "
                + "\(JobFileLimits.maximumDepth) levels deep (the brackets from here open too many lists and mappings); "
                + "expected at most \(JobFileLimits.maximumDepth) levels")
        }
        if problem == "mapping values are not allowed in this context", let text = line(problemMark.line) {
            let indent = indentation(text)
            let previous = (1..<problemMark.line).reversed().lazy.compactMap { n -> (Int, Int)? in
                guard let t = line(n) else { return nil }
                let trimmed = t.drop(while: { $0 == " " })
                return trimmed.isEmpty || trimmed.hasPrefix("#") ? nil : (n, indentation(t))
            }.first
            let key = text.dropFirst(indent).prefix(while: { $0 != ":" })
            let startsKey = indent + key.unicodeScalars.count + 1 == problemMark.column && !key.hasPrefix("-")
            if startsKey, let previous, indent > previous.1 {
                return YAMLComposer.Failure(
                    location: Location(line: problemMark.line, column: indent + 1),
                    message: "invalid YAML: \(EchoText.quoted(String(key) + ":")) is indented more than line \(previous.0) "
                        + "(\(indent) spaces, not \(previous.1)); expected keys of one mapping at the same indentation, "
                        + "and a nested mapping only under a key with no value")
            }
            return YAMLComposer.Failure(location: problemMark, message: "invalid YAML: found \": \" inside a plain value; "
                + "expected it only after a key (quote a value that contains \": \")")
        }
        if problem == "did not find expected key" || problem == "did not find expected '-' indicator" {
            let what = problem.hasSuffix("key") ? "a key (name: value)" : "a list item (- value)"
            return YAMLComposer.Failure(location: problemMark, message: "invalid YAML: expected \(what) at column "
                + "\(contextMark.column), like the \(problem.hasSuffix("key") ? "mapping" : "list") at line \(contextMark.line), "
                + "found a line indented differently; check the indentation")
        }
        let found = problem.hasPrefix("but ") ? String(problem.dropFirst(4)) : problem
        guard let context else { return YAMLComposer.Failure(location: problemMark, message: "invalid YAML: \(found)") }
        return YAMLComposer.Failure(location: problemMark, message: "invalid YAML: \(context) (line \(contextMark.line), "
            + "column \(contextMark.column)): \(found)")
    }
}
