import RefreshdCore

/// The checks for settings whose values have structure: identifiers, commands, retry policies,
/// requirement lists and environments. Each reports its problems at the offending value and
/// returns nil (or a neutral value) so the rest of the file can still be checked.
enum SettingRules {
    static let identifierExpectation =
        "a reverse-DNS name like com.example.refresh (labels of letters, digits, - and _, at least two, separated by dots)"

    /// `design.example.wallpaper.refresh`: at least two non-empty labels of `[A-Za-z0-9_-]`.
    static func identifier(_ reader: ValueReader, _ sink: inout ErrorSink) -> String? {
        guard let text = reader.string(&sink, expected: identifierExpectation) else { return nil }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(isLabelScalar) }) else {
            sink.add(at: reader.node.location, "identifier: expected \(identifierExpectation), found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }

    /// The namespace of a job without `namespace:`: its identifier without the last label, the
    /// app in iOS's `<bundle id>.<task name>` convention, since iOS's pending limits are per app.
    /// `com.me.quick` -> `com.me`; `design.example.wallpaper.refresh` ->
    /// `design.example.wallpaper`; `design.example.dayparts` -> `design.example`. Identifiers
    /// have at least two labels, so the result is never empty.
    static func defaultNamespace(of identifier: String) -> String {
        guard let dot = identifier.lastIndex(of: ".") else { return identifier }
        return String(identifier[..<dot])
    }

    /// A namespace: non-empty, letters, digits, `.`, `-` and `_`.
    static func namespace(_ reader: ValueReader, _ sink: inout ErrorSink) -> String? {
        let expected = "a name of letters, digits, ., - and _ (like default or com.example)"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ isLabelScalar($0) || $0 == "." }) else {
            sink.add(at: reader.node.location, "namespace: expected \(expected), found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }

    /// `[program, args...]` or a single program string; the program is resolved by `resolver`.
    static func command(_ reader: ValueReader, resolver: CommandResolver, _ sink: inout ErrorSink) -> [String]? {
        let expected = "a list like [\"Scripts/refresh\", \"--flag\"] or a program name"
        var argv: [String] = []
        var programNode = reader.node
        switch reader.node {
        case .sequence(let sequence, _):
            guard let first = sequence.first else {
                sink.add(at: reader.node.location, "command: expected a program and its arguments, found an empty list")
                return nil
            }
            programNode = first
            var valid = true
            for element in sequence {
                if let text = element.scalarText {
                    if text.hasNUL { valid = false; continue }  // reported by the composer
                    if let problem = execStringProblem(text, what: "argument") {
                        sink.add(at: element.location, "command: \(problem)")
                        valid = false
                    }
                    argv.append(text)
                    continue
                }
                sink.add(at: element.location, "command: expected each element to be a string, found \(element.foundDescription)")
                valid = false
            }
            guard valid else { return nil }
        default:
            guard let text = reader.string(&sink, expected: expected) else { return nil }
            if let problem = execStringProblem(text, what: "program") {
                sink.add(at: reader.node.location, "command: \(problem)")
                return nil
            }
            argv = [text]
        }
        switch resolver.resolve(argv[0]) {
        case .success(let path):
            argv[0] = path
            return argv
        case .failure(let message):
            var text = message.description
            // A string is one program, never a command line: `bin/fetch.sh --verbose` names a
            // file of that whole name. Point at the list form when the words were meant apart.
            if case .scalar = reader.node, let words = Self.commandLineWords(argv[0]) {
                text += "; a string names one program, not a command line: for a program and its arguments "
                    + "write the list command: [\(words.joined(separator: ", "))]"
            }
            sink.add(at: programNode.location, text)
            return nil
        }
    }

    /// The words of a string that reads as a command line (a space between non-empty words), as
    /// YAML flow-list items (quoted where YAML needs it); nil for one word.
    static func commandLineWords(_ text: String) -> [String]? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count > 1, words.count <= 20, text.utf8.count <= 200 else { return nil }
        return words.map { word in
            let plain = word.unicodeScalars.allSatisfy { s in
                ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || "/._-=+@%".unicodeScalars.contains(s)
            }
            return plain ? word : EchoText.quoted(word)
        }
    }

    /// `{backoff, initial, max, limit}`, each optional with `RetryPolicy`'s defaults.
    static func retry(_ reader: ValueReader, _ sink: inout ErrorSink) -> RetryPolicy? {
        guard let pairs = reader.mapping(known: ["backoff", "initial", "max", "limit"], &sink) else { return nil }
        var policy = RetryPolicy()
        let before = sink.errors.count
        var maxNode: YAMLNode?
        for pair in pairs {
            let value = ValueReader(key: "retry.\(pair.key)", node: pair.value)
            switch pair.key {
            case "backoff":
                if let text = value.oneOf(RetryPolicy.Backoff.allCases.map(\.rawValue), &sink),
                   let backoff = RetryPolicy.Backoff(rawValue: text) { policy.backoff = backoff }
            case "initial": policy.initial = value.duration(&sink, positive: true) ?? policy.initial
            case "max":
                maxNode = pair.value
                policy.maximum = value.duration(&sink, positive: true) ?? policy.maximum
            case "limit": policy.limit = value.count(&sink) ?? policy.limit
            default: break
            }
        }
        guard sink.errors.count == before else { return nil }
        if policy.maximum < policy.initial {
            let location = maxNode?.location ?? reader.node.location
            sink.add(at: location, "retry.max: expected at least retry.initial (\(DurationParser.format(policy.initial))), "
                + "found \(DurationParser.format(policy.maximum))")
            return nil
        }
        return policy
    }

    /// A list of `external-power` and `network` without repeats (a single value is accepted too).
    static func requires(_ reader: ValueReader, _ sink: inout ErrorSink) -> Set<String> {
        let allowed = ["external-power", "network"]
        let elements: [YAMLNode]
        if case .sequence(let sequence, _) = reader.node { elements = Array(sequence) } else { elements = [reader.node] }
        var seen = Set<String>()
        for element in elements {
            guard let value = ValueReader(key: "requires", node: element).oneOf(allowed, &sink) else { continue }
            if !seen.insert(value).inserted {
                sink.add(at: element.location, "requires: \"\(value)\" is listed twice; expected each requirement at most once")
            }
        }
        return seen
    }

    /// `{NAME: value}` with names matching `[A-Za-z_][A-Za-z0-9_]*` and scalar values.
    static func environment(_ reader: ValueReader, _ sink: inout ErrorSink) -> [String: String] {
        guard case .mapping(let mapping, _) = reader.node else {
            sink.add(at: reader.node.location,
                     "environment: expected a mapping like {NAME: value}, found \(reader.node.foundDescription)")
            return [:]
        }
        var result: [String: String] = [:]
        for (keyNode, valueNode) in mapping {
            if keyNode.scalarText?.hasNUL == true { continue }  // reported by the composer
            guard let name = keyNode.scalarText, isEnvironmentName(name) else {
                sink.add(at: keyNode.location, "environment: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*, "
                    + "found \(keyNode.foundDescription)")
                continue
            }
            if let value = ValueReader(key: "environment.\(name)", node: valueNode).string(&sink) {
                if let problem = execStringProblem(name + "=" + value, what: "variable (NAME=value)") {
                    sink.add(at: valueNode.location, "environment.\(name): \(problem)")
                    continue
                }
                result[name] = value
            }
        }
        return result
    }

    /// Why exec would refuse `text` as one argument or environment string, if it would: the
    /// kernel takes at most MAX_ARG_STRLEN (131,072) bytes per string, its NUL included.
    static func execStringProblem(_ text: String, what: String) -> String? {
        let bytes = text.utf8.count
        guard bytes > JobFileLimits.maximumExecStringBytes else { return nil }
        return "the \(what) is \(bytes) bytes long; expected at most \(JobFileLimits.maximumExecStringBytes) bytes "
            + "(the kernel's limit for one string, MAX_ARG_STRLEN), or every launch would fail with E2BIG"
    }

    static func isLabelScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_")
    }

    static func isEnvironmentName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != "-", !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { isLabelScalar($0) && $0 != "-" }
    }
}
