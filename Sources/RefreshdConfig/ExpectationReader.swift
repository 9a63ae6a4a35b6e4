import RefreshdCore

/// Reads a scenario's `expect:` list: what the simulation's report must show.
///
/// ```yaml
/// expect:
///   - runs: {job: test.nightly, outcome: success, equal: 3}   # or at-most / at-least
///   - max-missed: {job: test.nightly, count: 0}                # job optional: all jobs
///   - max-lateness: {job: test.nightly, limit: 5m}
///   - no-violation
///   - widget: {kind: wallpaper, family: systemSmall, day: 1, stale-minutes: {at-least: 600}}
///   - widget: {kind: wallpaper, first-stale: {before: "12:00"}}     # or first-stale: never
///   - activity: {id: pack-1, state: ended, cause: active-limit, after: {at-least: 8h}}
///   - activity: {id: pack-1, state: stale, reached: false}          # never stale
///   - activity: {id: pack-1, final: dismissed}
///   - notifications: {failure: {equal: 3}}         # or recovery, delivered, retries, given-up, dropped, held
/// ```
enum ExpectationReader {
    static let kinds = ["runs", "max-missed", "max-lateness", "no-violation", "widget", "activity", "notifications"]
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
        case "widget":
            return widget(reader, &sink)
        case "activity":
            return activity(reader, &sink)
        case "notifications":
            return notifications(reader, &sink)
        default:  // no-violation
            guard value.isNullScalar else {
                sink.add(at: value.location, "no-violation: expected nothing after it (write - no-violation), found \(value.foundDescription)")
                return nil
            }
            return .noViolation
        }
    }

    static let widgetExample = "{kind: wallpaper, family: systemSmall, day: 1, stale-minutes: {equal: 0}}"

    /// `{kind, family?, day?, FIGURE: {equal|at-most|at-least: N}}` or `{..., first-stale: {before: HH:MM} | never}`.
    static func widget(_ reader: ValueReader, _ sink: inout ErrorSink) -> Expectation? {
        let figures = Expectation.WidgetFigure.allCases.map(\.rawValue)
        guard let fields = MappingFields(reader, known: ["kind", "family", "day"] + figures + ["first-stale"], example: widgetExample, &sink)
        else { return nil }
        let before = sink.errors.count
        let kind = fields.required("kind", &sink)?.line(&sink, expected: "a widget kind")
        let family = fields.optional("family").flatMap { $0.oneOf(WidgetSpec.knownFamilies, &sink) }
        let day = fields.optional("day")?.integer(in: 1...366, &sink, expected: "a day of the simulation, 1 or greater")
        let named = fields.pairs.filter { figures.contains($0.key) || $0.key == "first-stale" }
        guard named.count == 1 else {
            sink.add(at: reader.node.location, "widget: expected exactly one of \((figures + ["first-stale"]).joined(separator: ", ")) "
                + "(like \(widgetExample)), found \(named.count)")
            return nil
        }
        let value = ValueReader(key: "widget." + named[0].key, node: named[0].value)
        if named[0].key == "first-stale" {
            var minute: Int?
            if value.node.scalarText != "never" {
                guard let f = MappingFields(value, known: ["before"], example: "{before: \"12:00\"} or never", &sink),
                      let m = f.required("before", &sink)?.timeOfDay(&sink) else { return nil }
                minute = m
            }
            guard sink.errors.count == before, let kind else { return nil }
            return .widgetFirstStale(kind: kind, family: family, day: day, before: minute)
        }
        guard let bound = comparison(value, &sink, { v, s in v.count(&s) }), sink.errors.count == before, let kind,
              let figure = Expectation.WidgetFigure(rawValue: named[0].key) else { return nil }
        return .widget(kind: kind, family: family, day: day, figure, bound.0, bound.1)
    }

    static let notificationsExample = "{failure: {equal: 3}}"

    /// `{FIGURE: {COMPARISON: N}}`: exactly one figure of the report's notification counts.
    static func notifications(_ reader: ValueReader, _ sink: inout ErrorSink) -> Expectation? {
        let figures = Expectation.NotificationFigure.allCases.map(\.rawValue)
        guard let fields = MappingFields(reader, known: figures, example: notificationsExample, &sink) else { return nil }
        guard fields.pairs.count == 1, let figure = Expectation.NotificationFigure(rawValue: fields.pairs[0].key) else {
            sink.add(at: reader.node.location, "notifications: expected exactly one of \(figures.joined(separator: ", ")) "
                + "(like \(notificationsExample)), found \(fields.pairs.count)")
            return nil
        }
        let value = ValueReader(key: "notifications." + figure.rawValue, node: fields.pairs[0].value)
        guard let bound = comparison(value, &sink, { v, s in v.count(&s) }) else { return nil }
        return .notifications(figure, bound.0, bound.1)
    }

    static let activityExample = "{id: pack-1, state: ended, cause: active-limit, after: {at-least: 8h}}"

    /// `{id, state, cause?, after?: {COMPARISON: DURATION}, reached?: false}` or `{id, final: STATE}`.
    static func activity(_ reader: ValueReader, _ sink: inout ErrorSink) -> Expectation? {
        guard let fields = MappingFields(reader, known: ["id", "state", "cause", "after", "reached", "final"], example: activityExample, &sink)
        else { return nil }
        let before = sink.errors.count
        let states = ActivityState.allCases.map(\.rawValue)
        let id = fields.required("id", &sink)?.line(&sink, expected: "an activity id")
        if let final = fields.optional("final") {
            let state = final.oneOf(states, &sink)
            guard sink.errors.count == before, let id, let state else { return nil }
            return .activityFinal(id: id, state: state)
        }
        let state = fields.required("state", &sink)?.oneOf(states, &sink)
        let cause = fields.optional("cause")?.oneOf(ActivityCause.allCases.map(\.rawValue), &sink)
        let after = fields.optional("after").flatMap { value in comparison(value, &sink, { v, s in v.duration(&s, positive: false) }) }
        let reached = fields.optional("reached")?.bool(&sink) ?? true
        guard sink.errors.count == before, let id, let state else { return nil }
        return .activity(id: id, state: state, cause: cause, after: after, reached: reached)
    }

    /// `{equal: V}`, `{at-most: V}` or `{at-least: V}`.
    static func comparison<V>(_ reader: ValueReader, _ sink: inout ErrorSink,
                              _ read: (ValueReader, inout ErrorSink) -> V?) -> (Expectation.Comparison, V)? {
        guard let fields = MappingFields(reader, known: comparisons.map(\.key), example: "{at-least: 3}", &sink) else { return nil }
        guard fields.pairs.count == 1, let c = comparisons.first(where: { $0.key == fields.pairs[0].key }),
              let value = fields.optional(c.key) else {
            sink.add(at: reader.node.location, "\(reader.key): expected one of equal:, at-most: or at-least: (like {at-least: 3})")
            return nil
        }
        return read(value, &sink).map { (c.comparison, $0) }
    }
}
