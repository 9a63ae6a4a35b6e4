import Foundation

/// An instance's job as it runs (issue 23): its template's command, job spec and built-in action
/// with the instance's parameter values filled into their placeholders.
extension CommandJob {
    /// The command a run of an instance executes: every argument and environment value with its
    /// placeholders filled (each stays one argv element: no shell ever reads them).
    package func filled(_ values: [String: String]) -> CommandJob {
        var job = self
        job.argv = argv.map { Placeholders.fill($0, values) }
        for (name, value) in environment where Placeholders.mayHavePlaceholders(value) {
            job.environment[name] = Placeholders.fill(value, values)
        }
        return job
    }
}

extension JobSpec {
    /// The spec as the runtime keeps it in force: without its (possibly large) instance list,
    /// which is applied, not kept.
    package var withoutInstanceSource: JobSpec {
        var spec = self
        spec.instanceSource = nil
        return spec
    }

    /// What a run of an instance with these values executes: the command with its placeholders
    /// filled (see `CommandJob.filled`), and its built-in action's options (`ActionSpec.filled`).
    package func filled(_ values: [String: String]) -> JobSpec {
        var spec = self
        spec.command = command.filled(values)
        spec.action = action?.filled(values)
        return spec
    }
}

extension ActionSpec {
    /// The action of an instance (issue 23): every placeholder in its options filled with the
    /// instance's values. The fingerprint (`key=value` lines) is filled as text; a JSON payload
    /// is filled string by string (its own braces are JSON's, not placeholders), any other
    /// payload as text. The configuration allows placeholders only where a value fits (a
    /// `stage-playlist` path); the core has checked those values (`TemplateSpec.pathProblem`).
    package func filled(_ values: [String: String]) -> ActionSpec {
        var spec = self
        spec.fingerprint = Placeholders.fill(fingerprint, values)
        if let data = payload.data(using: .utf8), payload.utf8.first == UInt8(ascii: "{"),
           let object = try? JSONSerialization.jsonObject(with: data) {
            func fill(_ value: Any) -> Any {
                switch value {
                case let text as String: Placeholders.fill(text, values)
                case let list as [Any]: list.map(fill)
                case let members as [String: Any]: members.mapValues(fill)
                default: value
                }
            }
            if let encoded = try? JSONSerialization.data(withJSONObject: fill(object), options: [.sortedKeys, .withoutEscapingSlashes]) {
                spec.payload = String(decoding: encoded, as: UTF8.self)
            }
        } else {
            spec.payload = Placeholders.fill(payload, values)
        }
        return spec
    }
}
