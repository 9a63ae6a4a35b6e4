import RefreshdCore

/// Walks a mapping's keys, reporting keys that are not settings and suggesting the closest one.
///
/// A misspelt key is the most common mistake in hand-written YAML, and silently ignoring it
/// would run the job with a default the author did not mean: `allowence: 5m` is an error that
/// says `did you mean "allowance"?`.
enum MappingReader {
    /// The pairs of `mapping` whose keys are in `known`; every other key is reported at its position.
    /// `prefix` names the enclosing setting in messages (`retry.` for `retry: {...}`).
    static func pairs(of mapping: [(key: YAMLNode, value: YAMLNode)], known: [String], prefix: String,
                      _ sink: inout ErrorSink) -> [(key: String, keyNode: YAMLNode, value: YAMLNode)] {
        var result: [(key: String, keyNode: YAMLNode, value: YAMLNode)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalarText else {
                sink.add(at: keyNode.location,
                         "expected a setting name (\(known.joined(separator: ", "))), found \(keyNode.foundDescription)")
                continue
            }
            if key.hasNUL { continue }  // reported by the composer
            guard known.contains(key) else {
                sink.add(at: keyNode.location, unknownKeyMessage(key, known: known, prefix: prefix))
                if let suggestion = closest(to: key, in: known) { sink.suggestedKeys.insert(prefix + suggestion) }
                continue
            }
            result.append((key, keyNode, value))
        }
        return result
    }

    /// `unknown key "allowence" (did you mean "allowance"?)`, or the list of known keys when none is close.
    static func unknownKeyMessage(_ key: String, known: [String], prefix: String) -> String {
        let where_ = prefix.isEmpty ? "" : " in \(prefix.dropLast())"
        if let suggestion = closest(to: key, in: known) {
            return "unknown key \(EchoText.quoted(key))\(where_) (did you mean \"\(suggestion)\"?)"
        }
        return "unknown key \(EchoText.quoted(key))\(where_); expected one of \(known.joined(separator: ", "))"
    }

    /// The known key nearest to `key`, if its edit distance is at most 2 (ties go to the first listed).
    static func closest(to key: String, in known: [String]) -> String? {
        guard key.utf8.count <= 40 else { return nil }  // no setting name is near a long text
        var best: (key: String, distance: Int)?
        for candidate in known {
            let distance = EditDistance.between(key.lowercased(), candidate, limit: 2)
            if distance <= 2, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.key
    }
}
