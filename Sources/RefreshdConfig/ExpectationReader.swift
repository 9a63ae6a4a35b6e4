import RefreshdCore
import RefreshdSimulation

/// Reads a scenario's `expect:` list: what the simulation's report must show.
///
/// ```yaml
/// expect:
///   - runs: {job: test.nightly, outcome: success, equal: 3}   # or at-most / at-least
///   - max-missed: {job: test.nightly, count: 0}                # job optional: all jobs
///   - max-lateness: {job: test.nightly, limit: 5m}
///   - no-violation
/// ```
enum ExpectationReader {
    static let kinds = ["runs", "max-missed", "max-lateness", "no-violation"]
    static let example = "{runs: {job: com.example.refresh, equal: 3}}"
    static let comparisons: [(key: String, comparison: Expectation.Comparison)] = [
        ("equal", .equal), ("at-most", .atMost), ("at-least", .atLeast),
    ]

    static func read(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> [Expectation]? {
        if reader.node.isNullScalar { return [] }
        guard case .sequence(let items, _) = reader.node else {
            sink.add(at: reader.node.location, "expect: expected a list like [\(example), no-violation], found \(reader.node.foundDescription)")
            return nil
        }
        var expectations: [Expectation] = []
        var valid = true
        for item in items {
            if let expectation = expectation(item, &references, &sink) { expectations.append(expectation) } else { valid = false }
        }
        return valid ? expectations : nil
    }

    static func expectation(_ item: YAMLNode, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> Expectation? {
        guard let (kind, _, value) = SingleKeyItem.read(item, list: "expect", kinds: kinds, example: example, &sink) else { return nil }
        let reader = ValueReader(key: kind, node: value)
        switch kind {
        case "runs":
            let example = "{job: com.example.refresh, outcome: success, equal: 3}"
            guard let fields = MappingFields(reader, known: ["job", "outcome"] + comparisons.map(\.key), example: example, &sink)
            else { return nil }
            let before = sink.errors.count
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            var outcome: Outcome?
            if let value = fields.optional("outcome"), let text = value.oneOf(Outcome.allCases.map(\.rawValue), &sink) {
                outcome = Outcome(rawValue: text)
            }
            let given = comparisons.filter { fields.optional($0.key) != nil }
            var bound: (Expectation.Comparison, Int)?
            switch given.count {
            case 0:
                let suggested = comparisons.contains { sink.suggestedKeys.contains("runs." + $0.key) }
                if !suggested {
                    sink.add(at: reader.node.location, "runs: missing a count: expected equal: N, at-most: N or at-least: N (like \(example))")
                }
            case 1:
                if let count = fields.optional(given[0].key)?.count(&sink) { bound = (given[0].comparison, count) }
            default:
                let second = fields.pairs.filter { pair in given.contains { $0.key == pair.key } }[1]
                sink.add(at: second.keyNode.location, "runs: expected one of equal:, at-most: or at-least:, "
                    + "found \(given[0].key) and \(given[1].key)")
            }
            guard sink.errors.count == before, let job, let bound else { return nil }
            return .runs(job: job, outcome: outcome, bound.0, bound.1)
        case "max-missed":
            guard let fields = MappingFields(reader, known: ["job", "count"], example: "{job: com.example.nightly, count: 0}", &sink)
            else { return nil }
            var job: String?
            var jobValid = true
            if let value = fields.optional("job") {
                job = references.job(value, &sink)
                jobValid = job != nil
            }
            let count = fields.required("count", &sink)?.count(&sink)
            guard jobValid, let count else { return nil }
            return .maxMissed(job: job, count)
        case "max-lateness":
            guard let fields = MappingFields(reader, known: ["job", "limit"], example: "{job: com.example.refresh, limit: 5m}", &sink)
            else { return nil }
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let limit = fields.required("limit", &sink)?.duration(&sink, positive: false)
            guard let job, let limit else { return nil }
            return .maxLateness(job: job, limit)
        default:  // no-violation
            guard value.isNullScalar else {
                sink.add(at: value.location, "no-violation: expected nothing after it (write - no-violation), found \(value.foundDescription)")
                return nil
            }
            return .noViolation
        }
    }
}
