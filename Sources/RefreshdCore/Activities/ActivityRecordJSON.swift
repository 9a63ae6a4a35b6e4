/// An activity's record and publication text without Foundation: the bytes `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes for `Activity` (its synthesized `Codable`:
/// nil members left out, instants as `Instant.iso8601`), written directly.
///
/// Every applied activity update saves and publishes its activity, so a simulated year of
/// `Jobs/` encodes about 96,000 of them; through `JSONEncoder` that was tens of µs each.
/// `ActivityRecordJSONTests` compares both on generated activities.
extension Activity {
    /// The JSON text `JSONEncoder` writes; nil where it throws (a relevance that is not finite),
    /// so the caller skips the record as it skipped the encoder's failure.
    package var recordJSON: String? {
        var w = RecordWriter(capacity: 512 + attributes.utf8.count + content.utf8.count)
        w.open()
        w.key("attributes"); w.string(attributes)
        w.key("content"); w.string(content)
        if let dismissalByPolicy { w.key("dismissalByPolicy"); w.instant(dismissalByPolicy) }
        if let dismissalPolicy {
            w.key("dismissalPolicy")
            w.open()
            if case let .after(date) = dismissalPolicy { w.key("date"); w.instant(date) }
            w.key("kind")
            switch dismissalPolicy {
            case .default: w.string("default")
            case .immediate: w.string("immediate")
            case .after: w.string("after")
            }
            w.close()
        }
        if let endCause { w.key("endCause"); w.string(endCause.rawValue) }
        if let ended { w.key("ended"); w.instant(ended) }
        w.key("frequentUpdates"); w.bool(frequentUpdates)
        if let held {
            w.key("held")
            w.open()
            w.key("coalesced"); w.int(held.coalesced)
            w.key("content"); w.string(held.content)
            w.key("heldSince"); w.instant(held.heldSince)
            w.key("release"); w.instant(held.release)
            if let relevance = held.relevance {
                guard relevance.isFinite else { return nil }
                w.key("relevance"); w.raw(StrictJSON.number(relevance))
            }
            if let staleDate = held.staleDate { w.key("staleDate"); w.instant(staleDate) }
            w.key("timestamp"); w.instant(held.timestamp)
            w.close()
        }
        w.key("highPriorityUses")
        w.out.append(UInt8(ascii: "["))
        for (n, use) in highPriorityUses.enumerated() {
            if n > 0 { w.out.append(UInt8(ascii: ",")) }
            w.instant(use)
        }
        w.out.append(UInt8(ascii: "]"))
        w.first = false
        w.key("id"); w.string(id)
        if let lastUpdateTimestamp { w.key("lastUpdateTimestamp"); w.instant(lastUpdateTimestamp) }
        w.key("namespace"); w.string(namespace)
        if let owner { w.key("owner"); w.string(owner) }
        if let relevance {
            guard relevance.isFinite else { return nil }
            w.key("relevance"); w.raw(StrictJSON.number(relevance))
        }
        w.key("requested"); w.instant(requested)
        if let staleDate { w.key("staleDate"); w.instant(staleDate) }
        w.key("start"); w.instant(start)
        w.key("state"); w.string(state.rawValue)
        w.key("stateSince"); w.instant(stateSince)
        w.key("typeName"); w.string(typeName)
        w.key("updatesApplied"); w.int(updatesApplied)
        w.key("updatesIgnored"); w.int(updatesIgnored)
        w.close()
        return String(decoding: w.out, as: UTF8.self)
    }
}

/// Appends a compact JSON object's parts; keys are written in the order given (sorted by the caller).
private struct RecordWriter {
    var out: [UInt8] = []
    var first = true

    init(capacity: Int) { out.reserveCapacity(capacity) }

    mutating func open() {
        out.append(UInt8(ascii: "{"))
        first = true
    }

    mutating func close() {
        out.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func key(_ name: StaticString) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    /// As `JSONEncoder` escapes: `"` `\` and the control characters (`\b \f \n \r \t`, else `\u00xx`).
    mutating func string(_ text: String) {
        StrictJSON.appendString(text, to: &out)
        first = false
    }

    mutating func instant(_ instant: Instant) {
        out.append(UInt8(ascii: "\""))
        ISO8601.append(instant, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    mutating func int(_ value: Int) { out.append(contentsOf: value.description.utf8) }

    mutating func bool(_ value: Bool) { out.append(contentsOf: (value ? "true" : "false").utf8) }

    mutating func raw(_ text: String) { out.append(contentsOf: text.utf8) }
}
