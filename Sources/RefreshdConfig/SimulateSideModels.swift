import RefreshdCore

/// Reads the `timeline:` and `activity:` keys of a `simulate:` block: what a modelled timeline
/// provider returns, and the live activity a modelled job drives while it runs.
///
/// ```yaml
/// simulate:
///   timeline: {entries: ["06:00", "12:00", "18:00", "22:00"], policy: at-end, upstream-fetch: true}
///   # or {every: 1h, count: 1, policy: at-end}, {entries: now, policy: {after: tomorrow}}, policy: never
///   activity: {type: WallpaperPack, id: "pack-{run}", updates: 10m, progress: 0..1, end: default, stale-after: 15m}
/// ```
enum SimulateSideModels {
    static let timelineKeys = ["entries", "every", "count", "policy", "upstream-fetch"]
    static let timelineExample = "{entries: [\"06:00\", \"18:00\"], policy: at-end}"
    static let activityKeys = ["type", "id", "updates", "progress", "end", "stale-after", "priority"]
    static let activityExample = "{type: WallpaperPack, id: pack-1, updates: 10m, progress: 0..1, end: default}"

    static func timeline(_ reader: ValueReader, _ sink: inout ErrorSink) -> TimelineModel? {
        guard let fields = MappingFields(reader, known: timelineKeys, example: timelineExample, &sink) else { return nil }
        let before = sink.errors.count
        var model = TimelineModel()
        let entries = fields.optional("entries"), every = fields.optional("every"), count = fields.optional("count")
        if let entries {
            if every != nil || count != nil {
                sink.add(at: fields.keyLocation(every != nil ? "every" : "count") ?? reader.node.location,
                         "\(reader.key): expected either entries: or every: (with count:), found both")
            } else if entries.node.scalarText == "now" {
                model.entries = .now
            } else if case .sequence(let items, _) = entries.node, !items.isEmpty {
                let minutes = items.compactMap { ValueReader(key: entries.key, node: $0).timeOfDay(&sink) }
                if minutes.count == items.count { model.entries = .timesOfDay(minutes) }
            } else {
                sink.add(at: entries.node.location, "\(entries.key): expected now or a list of times of day like "
                    + "[\"06:00\", \"18:00\"], found \(entries.node.foundDescription)")
            }
        } else if let every {
            let step = every.duration(&sink, positive: true)
            var n = 1
            if let count { n = count.integer(in: 1...500, &sink) ?? 1 }
            if let step { model.entries = .every(step, count: n) }
        } else if count != nil {
            sink.add(at: reader.node.location, "\(reader.key): count: needs every: (expected {every: 1h, count: 1})")
        }
        if let policy = fields.optional("policy") {
            if let text = policy.node.scalarText {
                switch text {
                case "at-end": model.policy = .atEnd
                case "never": model.policy = .never
                default:
                    sink.add(at: policy.node.location, "\(policy.key): expected at-end, never or {after: tomorrow} "
                        + "(or {after: 6h}), found \(EchoText.quoted(text))")
                }
            } else if let after = MappingFields(policy, known: ["after"], example: "{after: tomorrow}", &sink),
                      let value = after.required("after", &sink) {
                if value.node.scalarText == "tomorrow" {
                    model.policy = .afterTomorrow
                } else if let span = value.duration(&sink, positive: true) {
                    model.policy = .after(span)
                }
            }
        }
        if let fetch = fields.optional("upstream-fetch"), let flag = fetch.bool(&sink) { model.upstreamFetch = flag }
        return sink.errors.count == before ? model : nil
    }

    static func activity(_ reader: ValueReader, _ sink: inout ErrorSink) -> ActivityModel? {
        guard let fields = MappingFields(reader, known: activityKeys, example: activityExample, &sink) else { return nil }
        let before = sink.errors.count
        let type = fields.required("type", &sink)?.line(&sink, expected: "the activity's type name")
        let id = fields.required("id", &sink).flatMap { value -> String? in
            guard let text = value.line(&sink, expected: "an activity id like pack-{run}") else { return nil }
            // `{run}` and a template's `{parameters}` (checked by `TemplateSettings`) are filled
            // per run; the rest must already be an id.
            var plain = text.replacingOccurrences(of: "{run}", with: "1")
            if Placeholders.mayHavePlaceholders(plain), case let .success(pieces) = Placeholders.parse(plain) {
                plain = pieces.map { if case let .text(t) = $0 { t } else { "1" } }.joined()
            }
            let valid = !plain.isEmpty && plain.utf8.count <= 120 && plain.first != "." && plain.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)
            }
            if !valid {
                sink.add(at: value.node.location, "\(value.key): expected letters, digits, '.', '_' or '-' "
                    + "({run} for the run's number), found \(EchoText.quoted(text))")
                return nil
            }
            return text
        }
        var updates: Duration?
        if let value = fields.optional("updates") {
            if value.node.scalarText != "never" { updates = value.duration(&sink, positive: true) }
        }
        var progress: ClosedRange<Double> = 0...1
        if let value = fields.optional("progress"), let text = value.string(&sink, expected: "a range like 0..1") {
            let parts = text.components(separatedBy: "..")
            if parts.count == 2, let low = Double(parts[0]), let high = Double(parts[1]), low.isFinite, high.isFinite, low <= high {
                progress = low...high
            } else {
                sink.add(at: value.node.location, "\(value.key): expected a range like 0..1 (low..high), found \(EchoText.quoted(text))")
            }
        }
        var end: ActivityModel.End = .default
        if let value = fields.optional("end") {
            if let text = value.node.scalarText {
                switch text {
                case "default": end = .default
                case "immediate": end = .immediate
                case "none": end = .none
                default:
                    sink.add(at: value.node.location, "\(value.key): expected default, immediate, none or {after: 1h}, "
                        + "found \(EchoText.quoted(text))")
                }
            } else if let after = MappingFields(value, known: ["after"], example: "{after: 1h}", &sink),
                      let span = after.required("after", &sink)?.duration(&sink, positive: false) {
                end = .after(span)
            }
        }
        let stale = fields.optional("stale-after").flatMap { $0.duration(&sink, positive: true) }
        let high = fields.optional("priority").flatMap { $0.oneOf(["low", "high"], &sink) } == "high"
        guard sink.errors.count == before, let type, let id else { return nil }
        return ActivityModel(type: type, id: id, updates: updates, progress: progress, end: end, staleAfter: stale, highPriority: high)
    }
}
