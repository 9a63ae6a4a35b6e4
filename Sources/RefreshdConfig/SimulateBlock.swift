import RefreshdCore

/// Reads a job file's `simulate:` block into a `JobModel`: how the job behaves in
/// `refreshd simulate` and scenario tests. `refreshd run` ignores the block; `check` validates it.
///
/// ```yaml
/// simulate:
///   duration: 2s                  # or {uniform: [1s, 5s]}, {median: 2s, p99: 30s} or {quantiles: [1s, 2s, 9s]}
///   growth: 10s                   # added per earlier run
///   outcomes: {success: 0.9, failure: 0.08, crash: 0.02}
///   retry-outcomes: {success: 0.99, failure: 0.01}   # a retry's (attempt 2 and later); default: outcomes
///   ignores-sigterm: true
///   output: ["fetched 12 images"]
///   results: ['{"entries": []}']
///   timeline: {entries: ["06:00", "18:00"], policy: at-end}   # kind: timeline jobs (SimulateSideModels)
///   activity: {type: WallpaperPack, id: "pack-{run}", updates: 10m}
///   children: 2                   # background processes left in its group (die at its exit)
///   results-held-open: 2s         # or forever: a daemon it started keeps fd 3 open after its exit
///   instances: 10000              # a template: 10,000 instances, keys drawn from the seed
///   failing: 2%                   # a template: the share of them whose every run fails
///   memory: 300M                  # its peak: over the job's limits.memory, killed by the limit
/// ```
enum SimulateBlock {
    static let keys = ["duration", "growth", "outcomes", "ignores-sigterm", "output", "results", "timeline", "activity",
                       "children", "results-held-open", "instances", "failing", "retry-outcomes", "memory"]
    static let durationForms = "a duration like 2s, {uniform: [1s, 5s]}, {median: 2s, p99: 30s} or {quantiles: [1s, 2s, 9s]}"
    /// Most values a `quantiles:` list holds: p0 to p100, one a percent.
    static let maximumQuantiles = 101

    /// The model, or nil with every problem reported at its value.
    static func read(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel? {
        if reader.node.isNullScalar { return JobModel() }  // `simulate:` alone: the defaults
        guard let pairs = reader.mapping(known: keys, &sink) else { return nil }
        let before = sink.errors.count
        var model = JobModel()
        for pair in pairs {
            let value = ValueReader(key: "simulate." + pair.key, node: pair.value)
            switch pair.key {
            case "duration":
                if let duration = durationModel(value, &sink) { model.duration = duration }
            case "growth":
                if let growth = value.duration(&sink, positive: false) { model.growth = growth }
            case "outcomes":
                if let weights = outcomes(value, &sink) { model.outcomes = weights }
            case "retry-outcomes":
                if let weights = outcomes(value, &sink) { model.retryOutcomes = weights }
            case "ignores-sigterm":
                if let flag = value.bool(&sink) { model.ignoresTerminate = flag }
            case "output":
                if let lines = value.lines(&sink) { model.output = lines }
            case "results":
                if let lines = value.lines(&sink, jsonObjects: true) { model.results = lines }
            case "timeline":
                if let timeline = SimulateSideModels.timeline(value, &sink) { model.timeline = timeline }
            case "activity":
                if let activity = SimulateSideModels.activity(value, &sink) { model.activity = activity }
            case "children":
                if let count = value.integer(in: 0...64, &sink) { model.children = count }
            case "results-held-open":
                if let holder = resultsHolder(value, &sink) { model.resultsHeldOpen = holder }
            case "instances":
                if let count = value.integer(in: 1...1_000_000, &sink) { model.instances = count }
            case "failing":
                if let share = share(value, &sink) { model.failing = share }
            case "memory":
                if let bytes = LimitsReader.size(value, &sink) { model.memoryBytes = bytes }
            default:
                break
            }
        }
        return sink.errors.count == before ? model : nil
    }

    /// A share like `2%` or `0.5%` (0% to 100%), as a fraction.
    static func share(_ reader: ValueReader, _ sink: inout ErrorSink) -> Double? {
        let expected = "a percentage like 2% or 0.5%, from 0% to 100%"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        if text.hasSuffix("%") {
            let number = text.dropLast()
            let digits = number.utf8.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            let dots = number.utf8.filter { $0 == UInt8(ascii: ".") }.count
            if digits > 0, dots <= 1, digits + dots == number.utf8.count, let value = Double(number), value <= 100 {
                return value / 100
            }
        }
        sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// `forever`, or how long after the command's exit the results channel stays open.
    static func resultsHolder(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel.HeldOpen? {
        if reader.node.scalarText == "forever" { return .forever }
        let expected = "a duration like 2s, or forever"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        guard case let .success(span) = DurationParser.parse(text) else {
            sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(EchoText.quoted(text))")
            return nil
        }
        return .closesAfter(span)
    }

    /// `2s`, `{uniform: [LOW, HIGH]}` (LOW <= HIGH), `{median: M, p99: P}` (0 < M <= P) or
    /// `{quantiles: [Q0, ..., QN]}` (2 to 101 durations, each at least the one before).
    static func durationModel(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel.DurationModel? {
        guard case .mapping = reader.node else {
            if reader.node.scalarText == nil {
                sink.add(at: reader.node.location, "\(reader.key): expected \(durationForms), found \(reader.node.foundDescription)")
                return nil
            }
            return reader.duration(&sink, positive: false).map { .fixed($0) }
        }
        guard let pairs = reader.mapping(known: ["uniform", "median", "p99", "quantiles"], &sink) else { return nil }
        if let quantiles = pairs.first(where: { $0.key == "quantiles" }) {
            if let other = pairs.first(where: { $0.key != "quantiles" }) {
                sink.add(at: other.keyNode.location, "\(reader.key): expected quantiles: alone, found \(other.key): beside it")
                return nil
            }
            return quantileModel(ValueReader(key: reader.key + ".quantiles", node: quantiles.value), &sink)
        }
        let uniform = pairs.first { $0.key == "uniform" }
        let median = pairs.first { $0.key == "median" }
        let p99 = pairs.first { $0.key == "p99" }
        if let uniform {
            if let other = median ?? p99 {
                sink.add(at: other.keyNode.location, "\(reader.key): expected either uniform: or median: and p99:, found both")
                return nil
            }
            return uniformModel(ValueReader(key: reader.key + ".uniform", node: uniform.value), &sink)
        }
        guard let median, let p99 else {
            let missing = median == nil ? "median" : "p99"
            if pairs.isEmpty, sink.suggestedKeys.contains(where: { $0.hasPrefix(reader.key + ".") }) { return nil }
            if sink.suggestedKeys.contains(reader.key + "." + missing) { return nil }
            sink.add(at: reader.node.location, "\(reader.key): missing required key \"\(missing)\" "
                + "(expected {uniform: [1s, 5s]} or {median: 2s, p99: 30s})")
            return nil
        }
        let medianValue = ValueReader(key: reader.key + ".median", node: median.value).duration(&sink, positive: true)
        let p99Value = ValueReader(key: reader.key + ".p99", node: p99.value).duration(&sink, positive: true)
        guard let medianValue, let p99Value else { return nil }
        guard p99Value >= medianValue else {
            sink.add(at: p99.value.location, "\(reader.key).p99: expected a duration at least the median "
                + "(\(DurationParser.format(medianValue))), found \(EchoText.quoted(DurationParser.format(p99Value)))")
            return nil
        }
        return .skewed(median: medianValue, p99: p99Value)
    }

    /// `[Q0, ..., QN]`: 2 to 101 durations, each at least the one before (evenly spaced
    /// quantiles of the run durations, from the fastest to the slowest).
    private static func quantileModel(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel.DurationModel? {
        let expected = "a list of 2 to \(maximumQuantiles) durations in increasing order like [1s, 2s, 9s]"
        guard case .sequence(let items, _) = reader.node, (2...maximumQuantiles).contains(items.count) else {
            let found = if case .sequence(let items, _) = reader.node { "a list of \(items.count)" } else { reader.node.foundDescription }
            sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(found)")
            return nil
        }
        var values: [Duration] = []
        for item in items {
            guard let value = ValueReader(key: reader.key, node: item).duration(&sink, positive: false) else { return nil }
            if let previous = values.last, value < previous {
                sink.add(at: item.location, "\(reader.key): expected each duration to be at least the one before "
                    + "(\(DurationParser.format(previous))), found \(EchoText.quoted(DurationParser.format(value)))")
                return nil
            }
            values.append(value)
        }
        return .quantiles(values)
    }

    /// `[LOW, HIGH]` with LOW <= HIGH.
    private static func uniformModel(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel.DurationModel? {
        guard case .sequence(let items, _) = reader.node, items.count == 2 else {
            let found = if case .sequence(let items, _) = reader.node { "a list of \(items.count)" } else { reader.node.foundDescription }
            sink.add(at: reader.node.location, "\(reader.key): expected a list of two durations like [1s, 5s], found \(found)")
            return nil
        }
        let low = ValueReader(key: reader.key, node: items[0]).duration(&sink, positive: false)
        let high = ValueReader(key: reader.key, node: items[1]).duration(&sink, positive: false)
        guard let low, let high else { return nil }
        guard low <= high else {
            sink.add(at: items[1].location, "\(reader.key): expected the second duration to be at least the first "
                + "(\(DurationParser.format(low))), found \(EchoText.quoted(DurationParser.format(high)))")
            return nil
        }
        return .uniform(low, high)
    }

    /// `{success: W, failure: W, crash: W}`: weights >= 0, not all 0; a weight left out is 0.
    static func outcomes(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobModel.OutcomeWeights? {
        guard let pairs = reader.mapping(known: ["success", "failure", "crash"], &sink) else { return nil }
        var weights = JobModel.OutcomeWeights(success: 0, failure: 0, crash: 0)
        var valid = true
        for pair in pairs {
            guard let weight = ValueReader(key: reader.key + "." + pair.key, node: pair.value).weight(&sink) else {
                valid = false
                continue
            }
            switch pair.key {
            case "success": weights.success = weight
            case "failure": weights.failure = weight
            default: weights.crash = weight
            }
        }
        guard valid else { return nil }
        if pairs.isEmpty, sink.suggestedKeys.contains(where: { $0.hasPrefix(reader.key + ".") }) { return nil }
        guard weights.success + weights.failure + weights.crash > 0 else {
            sink.add(at: reader.node.location, "\(reader.key): expected at least one weight greater than 0 "
                + "(like {success: 0.9, failure: 0.1}), found none")
            return nil
        }
        return weights
    }
}
