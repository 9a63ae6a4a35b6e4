import RefreshdCore

/// Reads a scenario's `faults:` list: one fault per item, named by its only key.
///
/// ```yaml
/// faults:
///   - down: {at: +1d3h, for: 2h}
///   - kill: {at: +1d4h, restart-after: 30s}
///   - expire-run: {job: test.nightly, run: 2}
///   - clock-step: {at: +2d, by: -1h}
///   - suspend: {at: +1d3h, for: 2h}                            # seen: at-resume (default) or at-wake-up
///   - provider-garbage: {job: com.example.widget, run: 3}     # or {job, at, for}
///   - provider-expires: {job: com.example.widget, run: 2}
///   - budget-empty: {at: +1d, for: 6h}
///   - activity-silent: {job: com.example.download, run: 1, after: 20m}
///   - widget-intents: {at: +1d9h, count: 20}                   # button taps, a second apart
///   - low-power: {at: +1d, for: 8h}                            # Low Power Mode: counted reloads held
///   - notifier-down: {at: +1d, for: 10m}                       # failure notifications fail, retried
///   - pause: {job: com.example.refresh, at: +1d, for: 6h}      # ctl pause, then ctl resume (no for: stays paused)
///   - operator: {at: +1d2h, submit: com.example.refresh}        # or cancel, simulate-launch, simulate-expiration: JOB;
///                                                                # cancel-all: true; reload: KIND (or all)
/// ```
enum FaultReader {
    static let kinds = ["down", "kill", "expire-run", "crash-run", "clock-step", "suspend",
                        "store-full", "power-loss", "network-loss", "provider-garbage", "provider-expires",
                        "budget-empty", "activity-silent", "widget-intents", "low-power", "notifier-down", "pause", "operator"]
    static let example = "{kill: {at: +1d4h, restart-after: 30s}}"

    static func read(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> [Fault]? {
        if reader.node.isNullScalar { return [] }
        guard case .sequence(let items, _) = reader.node else {
            sink.add(at: reader.node.location, "faults: expected a list of faults like [\(example)], found \(reader.node.foundDescription)")
            return nil
        }
        var faults: [Fault] = []
        var valid = true
        for item in items {
            if let fault = fault(item, &references, &sink) { faults.append(fault) } else { valid = false }
        }
        return valid ? faults : nil
    }

    /// One `{KIND: {...}}` item.
    static func fault(_ item: YAMLNode, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> Fault? {
        guard let (kind, _, value) = SingleKeyItem.read(item, list: "faults", kinds: kinds, example: example, &sink) else { return nil }
        let reader = ValueReader(key: kind, node: value)
        switch kind {
        case "budget-empty":
            return DeviceReader.span(reader, &references, &sink).map { .budgetEmpty($0) }
        case "notifier-down":
            return DeviceReader.span(reader, &references, &sink).map { .notifierDown($0) }
        case "low-power":
            return DeviceReader.span(reader, &references, &sink).map { .lowPower($0) }
        case "widget-intents":
            guard let fields = MappingFields(reader, known: ["at", "count"], example: "{at: +1d9h, count: 20}", &sink) else { return nil }
            let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
            let count = fields.optional("count").map { $0.integer(in: 1...1000, &sink, expected: "a number of taps from 1 to 1000") } ?? 1
            guard let at, let count else { return nil }
            return .widgetIntents(at: at, count: count)
        case "provider-garbage":
            let example = "{job: com.example.widget, run: 3} or {job: com.example.widget, at: +1d, for: 2h}"
            guard let fields = MappingFields(reader, known: ["job", "run", "at", "for"], example: example, &sink) else { return nil }
            let before = sink.errors.count
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let run = fields.optional("run")?.integer(in: 1...1_000_000, &sink, expected: "a provider run number 1 or greater")
            var span: TimeSpan?
            if fields.optional("at") != nil || fields.optional("for") != nil {
                let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
                let length = fields.required("for", &sink)?.duration(&sink, positive: true)
                if let at, let length { span = TimeSpan(start: at, duration: length) }
            }
            if run == nil, span == nil, sink.errors.count == before {
                sink.add(at: reader.node.location, "provider-garbage: expected run: N or at: and for: (like \(example))")
            }
            guard sink.errors.count == before, let job else { return nil }
            return .providerGarbage(job: job, run: run, span: span)
        case "provider-expires":
            guard let fields = MappingFields(reader, known: ["job", "run"], example: "{job: com.example.widget, run: 2}", &sink)
            else { return nil }
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let run = fields.required("run", &sink)?.integer(in: 1...1_000_000, &sink, expected: "a provider run number 1 or greater")
            guard let job, let run else { return nil }
            return .providerExpires(job: job, run: run)
        case "pause":
            let example = "{job: com.example.refresh, at: +1d, for: 6h}"
            guard let fields = MappingFields(reader, known: ["job", "at", "for"], example: example, &sink) else { return nil }
            let before = sink.errors.count
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
            let length = fields.optional("for")?.duration(&sink, positive: true)
            guard sink.errors.count == before, let job, let at else { return nil }
            return .pause(job: job, at: at, for: length)
        case "operator":
            return order(reader, &references, &sink)
        case "activity-silent":
            let example = "{job: com.example.download, run: 1, after: 20m}"
            guard let fields = MappingFields(reader, known: ["job", "run", "after"], example: example, &sink) else { return nil }
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let run = fields.required("run", &sink)?.integer(in: 1...1_000_000, &sink, expected: "a run number 1 or greater")
            let after = fields.required("after", &sink)?.duration(&sink, positive: false)
            guard let job, let run, let after else { return nil }
            return .activitySilent(job: job, run: run, after: after)
        case "suspend":
            // seen: when refreshd learns of the resume: at once (the kernel's timerfd notice,
            // Linux 5.14 and later), or at its next wake-up (older kernels: no notice).
            let example = "{at: +1d3h, for: 2h, seen: at-wake-up}"
            guard let fields = MappingFields(reader, known: ["at", "for", "seen"], example: example, &sink) else { return nil }
            let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
            let length = fields.required("for", &sink)?.duration(&sink, positive: true)
            let seen = fields.optional("seen").map { $0.oneOf(["at-resume", "at-wake-up"], &sink) } ?? "at-resume"
            guard let at, let length, let seen else { return nil }
            return .suspend(TimeSpan(start: at, duration: length), seenAtWakeUp: seen == "at-wake-up")
        case "down", "store-full", "power-loss", "network-loss":
            guard let span = DeviceReader.span(reader, &references, &sink) else { return nil }
            switch kind {
            case "down": return .down(span)
            case "store-full": return .storeFull(span)
            case "power-loss": return .powerLoss(span)
            default: return .networkLoss(span)
            }
        case "kill":
            guard let fields = MappingFields(reader, known: ["at", "restart-after"], example: "{at: +1d4h, restart-after: 30s}", &sink)
            else { return nil }
            let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
            var restartAfter: Duration? = .zero
            if let value = fields.optional("restart-after") { restartAfter = value.duration(&sink, positive: false) }
            guard let at, let restartAfter else { return nil }
            return .kill(at: at, restartAfter: restartAfter)
        case "expire-run", "crash-run":
            guard let fields = MappingFields(reader, known: ["job", "run"], example: "{job: com.example.refresh, run: 2}", &sink)
            else { return nil }
            let job = fields.required("job", &sink).flatMap { references.job($0, &sink) }
            let run = fields.required("run", &sink)?.integer(in: 1...1_000_000, &sink, expected: "a run number 1 or greater (1 is the job's first run)")
            guard let job, let run else { return nil }
            return kind == "expire-run" ? .expireRun(job: job, run: run) : .crashRun(job: job, run: run)
        default:  // clock-step
            guard let fields = MappingFields(reader, known: ["at", "by"], example: "{at: +2d, by: -1h}", &sink) else { return nil }
            let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
            let by = fields.required("by", &sink)?.signedDuration(&sink)
            guard let at, let by else { return nil }
            return .clockStep(at: at, by: by)
        }
    }

    /// `operator: {at, ORDER: ...}`: an order from outside the job files at an instant, one of
    /// `submit`, `cancel`, `simulate-launch`, `simulate-expiration` (a job), `cancel-all: true`,
    /// `reload` (a widget kind, or `all`): what `simulate --replay` gives back of a recorded one.
    static func order(_ reader: ValueReader, _ references: inout ScenarioReferences, _ sink: inout ErrorSink) -> Fault? {
        let orders = ["submit", "cancel", "cancel-all", "simulate-launch", "simulate-expiration", "reload"]
        let example = "{at: +1d, submit: com.example.refresh}"
        guard let fields = MappingFields(reader, known: ["at"] + orders, example: example, &sink) else { return nil }
        let before = sink.errors.count
        let at = fields.required("at", &sink).flatMap { references.time($0, &sink) }
        let given = orders.filter { fields.optional($0) != nil }
        guard given.count == 1, let name = given.first, let value = fields.optional(name) else {
            sink.add(at: reader.node.location, "operator: expected one order of \(orders.joined(separator: ", ")) beside at (like \(example))"
                     + (given.count > 1 ? ", found \(given.joined(separator: " and "))" : ""))
            return nil
        }
        var order: OperatorOrder?
        switch name {
        case "cancel-all":
            if value.node.isNullScalar || value.string(&sink, expected: "true") == "true" { order = .cancelAll(namespace: nil) }
        case "reload":
            if let kind = value.string(&sink, expected: "a widget kind, or all") { order = .reloadWidgets(kind: kind == "all" ? nil : kind, reason: .explicitAPI) }
        default:
            guard let job = references.job(value, &sink) else { break }
            switch name {
            case "submit": order = .submit(job, earliest: nil)
            case "cancel": order = .cancel(job)
            case "simulate-launch": order = .launchNow(job)
            default: order = .expireNow(job)
            }
        }
        guard sink.errors.count == before, let at, let order else { return nil }
        return .order(order, at: at)
    }
}
