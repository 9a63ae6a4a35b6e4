import RefreshdCore

/// Reads a scenario's `device:` mapping into a `DeviceModel`.
///
/// ```yaml
/// device:
///   charging: {from: "22:00", to: "07:00"}   # or always, or never
///   network-down: [{at: +1d2h, for: 3h}]
///   low-power: [{at: +1d, for: 8h}]            # Low Power Mode: counted widget reloads held
///   discretion: exact                         # or {delayed: 15m}
///   timezone: Europe/Paris                    # of the charging window; default: the scenario's
///   foreground: ["08:00", "12:30", "19:00"]   # app sessions: exempt reloadAllTimelines each day
///   intents: ["08:05", "08:06"]               # interactive widget button taps: exempt reloads each day
///   system-reloads: {every: 6h}               # the system reloads every widget (reason system)
///   reloads: {every: 12m}                     # the app's explicit reloadAllTimelines (~120 a day)
///   widget-budget: 50                         # every widget's budget (reloads per family in 24 h)
///   condition-notices: false                  # no netlink notices (a container): changes found by the re-read
/// ```
enum DeviceReader {
    static let keys = ["charging", "network-down", "low-power", "discretion", "timezone", "foreground", "intents", "system-reloads", "reloads",
                       "widget-budget", "condition-notices"]

    static func read(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> DeviceModel? {
        guard let fields = MappingFields(reader, known: keys, example: "{charging: {from: \"22:00\", to: \"07:00\"}, discretion: exact}", &sink)
        else { return nil }
        let before = sink.errors.count
        var device = DeviceModel()
        if let charging = fields.optional("charging") {
            if let window = self.charging(charging, &sink) { device.charging = window }
        }
        if let spans = fields.optional("network-down") {
            device.networkDown = self.spans(spans, &references, &sink) ?? []
        }
        if let spans = fields.optional("low-power") {
            device.lowPower = self.spans(spans, &references, &sink) ?? []
        }
        if let discretion = fields.optional("discretion") {
            if let value = self.discretion(discretion, &sink) { device.discretion = value }
        }
        for key in ["foreground", "intents"] {
            guard let value = fields.optional(key) else { continue }
            if case .sequence(let items, _) = value.node {
                let minutes = items.compactMap { ValueReader(key: value.key, node: $0).timeOfDay(&sink) }
                if minutes.count == items.count {
                    if key == "foreground" { device.foreground = minutes } else { device.intents = minutes }
                }
            } else {
                sink.add(at: value.node.location, "\(value.key): expected a list of times of day like [\"08:00\", \"19:00\"], "
                    + "found \(value.node.foundDescription)")
            }
        }
        if let value = fields.optional("system-reloads") { device.systemReloads = every(value, &sink) }
        if let value = fields.optional("reloads") { device.explicitReloads = every(value, &sink) }
        if let value = fields.optional("widget-budget") {
            device.widgetBudget = value.integer(in: 0...1440, &sink, expected: "a budget from 0 to 1440 reloads a day")
        }
        if let value = fields.optional("condition-notices"), let on = value.bool(&sink) { device.conditionNotices = on }
        if let zone = fields.optional("timezone") {
            // The name as written: Foundation may call UTC "GMT".
            if zone.timeZone(&sink) != nil { device.timeZone = zone.node.scalarText }
        }
        return sink.errors.count == before ? device : nil
    }

    /// `always` (nil: always on mains), `never` (an empty window) or `{from: HH:MM, to: HH:MM}`.
    static func charging(_ reader: ValueReader, _ sink: inout ErrorSink) -> DeviceModel.DailyWindow?? {
        let example = "{from: \"22:00\", to: \"07:00\"}"
        if let text = reader.node.scalarText {
            switch text {
            case "always": return .some(nil)
            case "never": return .some(DeviceModel.DailyWindow(start: 0, end: 0))
            default:
                sink.add(at: reader.node.location, "\(reader.key): expected always, never or a daily window like \(example), "
                    + "found \(EchoText.quoted(text))")
                return nil
            }
        }
        guard let fields = MappingFields(reader, known: ["from", "to"], example: example, &sink) else { return nil }
        let from = fields.required("from", &sink)?.timeOfDay(&sink)
        let to = fields.required("to", &sink)?.timeOfDay(&sink)
        guard let from, let to else { return nil }
        if from == to {
            sink.add(at: fields.optional("to")?.node.location ?? reader.node.location, "\(reader.key).to: expected a time other "
                + "than from: (an empty window); write always or never for a machine always or never on mains")
            return nil
        }
        return .some(DeviceModel.DailyWindow(start: from, end: to))
    }

    /// `{every: DURATION}`, the duration at least a minute (a reload storm that floods the
    /// simulation is no model of an app).
    static func every(_ reader: ValueReader, _ sink: inout ErrorSink) -> Duration? {
        guard let fields = MappingFields(reader, known: ["every"], example: "{every: 12m}", &sink),
              let value = fields.required("every", &sink), let span = value.duration(&sink, positive: true) else { return nil }
        guard span >= .seconds(60) else {
            sink.add(at: value.node.location, "\(value.key): expected a duration of at least 1m, found \(EchoText.quoted(DurationParser.format(span)))")
            return nil
        }
        return span
    }

    /// `exact` or `{delayed: DURATION}` (greater than zero).
    static func discretion(_ reader: ValueReader, _ sink: inout ErrorSink) -> DeviceModel.Discretion? {
        if let text = reader.node.scalarText {
            if text == "exact" { return .exact }
            sink.add(at: reader.node.location, "\(reader.key): expected exact or {delayed: 15m}, found \(EchoText.quoted(text))")
            return nil
        }
        guard let fields = MappingFields(reader, known: ["delayed"], example: "{delayed: 15m}", &sink),
              let delayed = fields.required("delayed", &sink)?.duration(&sink, positive: true) else { return nil }
        return .delayed(maximum: delayed)
    }

    /// A list of `{at: INSTANT, for: DURATION}`.
    static func spans(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> [TimeSpan]? {
        guard case .sequence(let items, _) = reader.node else {
            sink.add(at: reader.node.location, "\(reader.key): expected a list like [{at: +1d2h, for: 3h}], found \(reader.node.foundDescription)")
            return nil
        }
        var spans: [TimeSpan] = []
        var valid = true
        for item in items {
            if let span = span(ValueReader(key: reader.key, node: item), &references, &sink) { spans.append(span) } else { valid = false }
        }
        return valid ? spans : nil
    }

    /// `{at: INSTANT, for: DURATION}`, the duration greater than zero.
    static func span(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> TimeSpan? {
        guard let fields = MappingFields(reader, known: ["at", "for"], example: "{at: +1d2h, for: 3h}", &sink) else { return nil }
        let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
        let length = fields.required("for", &sink)?.duration(&sink, positive: true)
        guard let at, let length else { return nil }
        return TimeSpan(start: at, duration: length)
    }
}
