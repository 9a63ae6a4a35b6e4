import Foundation

/// One accepted line of a run's results channel, read as the machines' vocabulary.
///
/// ```text
/// {"entries": [{"date": ISO8601, "content": {...}, "relevance": 0.5, "duration": 900}],
///  "policy": "atEnd" | "never" | {"after": ISO8601}, "upstreamFetch": true}   a timeline
/// {"waiting": "REASON"}                    a timeline provider with nothing to show yet
/// {"reloadTimelines": "KIND"}  /  {"reloadAllTimelines": true}                 explicit reloads
/// {"activity": "start", "id": ..., "type": ..., "attributes": {...}, "content": {...},
///  "staleDate": ISO8601, "relevance": 1, "startAt": ISO8601, "frequentUpdates": true}
/// {"activity": "update", "id": ..., "content": {...}, "staleDate": ISO8601,
///  "timestamp": ISO8601, "priority": "high" | "low"}
/// {"activity": "end", "id": ..., "content": {...},
///  "dismissal": "default" | "immediate" | {"after": ISO8601}, "timestamp": ISO8601}
/// ```
///
/// Dates are ISO 8601 with a zone (`Z` or an offset), fractional seconds allowed, parsed
/// strictly by `ISO8601.parseStrict` (no February 30, years 0001-9999): a refused date refuses
/// its line with the field and the reason (`entry 1: date: day 30: 2026-02 has 28 days`). A line that
/// names none of these keys is some other result and is left alone. Reload and activity lines
/// are "live": applied as soon as they are written, while the run goes on.
package enum ResultLine: Sendable, Hashable {
    case timeline(Timeline, upstreamFetch: Bool)
    /// A line that meant to be a timeline (it has `entries` or `policy`) and is not one.
    case badTimeline(String)
    /// A timeline provider with nothing to show yet (its source was never filled): not a failure.
    case waiting(String)
    case reloadTimelines(kind: String)
    case reloadAllTimelines
    case activity(ActivityEvent)
    /// A line that meant to drive an activity (it has `activity`) and cannot.
    case badActivity(String)
    /// A sync job's instances of a template (issue 23), applied at the end of a successful run.
    case instances(InstanceLines)
    case badInstances(String)
    case other

    /// Whether the line is applied at once, while its run goes on.
    package var isLive: Bool {
        switch self {
        case .reloadTimelines, .reloadAllTimelines, .activity, .badActivity: true
        default: false
        }
    }

    /// Reads one line (already checked to be one JSON object). `owner` and `namespace` are the
    /// run's job's, given to activities it starts; `now` stamps updates without a timestamp.
    package static func parse(_ line: String, owner: String, namespace: String, now: Instant) -> ResultLine {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            return .other
        }
        return parse(object: object, owner: owner, namespace: namespace, now: now)
    }

    /// Reads one line already decoded (`RunResults.verdict`).
    package static func parse(object: [String: Any], owner: String, namespace: String, now: Instant) -> ResultLine {
        if let verb = object["activity"] { return activity(verb, object, owner: owner, namespace: namespace, now: now) }
        if let kind = object["reloadTimelines"] {
            guard let kind = kind as? String, !kind.isEmpty else { return .badActivity("reloadTimelines: expected a widget kind") }
            return .reloadTimelines(kind: kind)
        }
        if object["reloadAllTimelines"] != nil { return .reloadAllTimelines }
        if object["instances"] != nil {
            switch InstanceLines.read(object) {
            case let .success(lines): return .instances(lines)
            case let .failure(bad): return .badInstances(bad.reason)
            }
        }
        if object["entries"] != nil || object["policy"] != nil { return timeline(object) }
        if let reason = object["waiting"] {
            guard let reason = reason as? String, !reason.isEmpty else { return .badTimeline("waiting: expected the reason, a string") }
            return .waiting(reason)
        }
        return .other
    }

    // MARK: Timelines

    private static func timeline(_ object: [String: Any]) -> ResultLine {
        timeline(FoundationFields(object: object))
    }

    /// One reading of a timeline line for both decoders (see `activity`).
    private static func timeline<F: ActivityFields>(_ object: F) throws(F.Failure) -> ResultLine {
        guard let items = try object.objects("entries") else { return .badTimeline("entries: expected a list of entries") }
        var entries: [TimelineEntry] = []
        for (index, item) in items.enumerated() {
            let place = "entry \(index + 1)"
            guard let entry = item else { return .badTimeline("\(place): expected an object") }
            let date: Instant
            switch try entry.date("date") {
            case let .success(value)?: date = value
            case let .failure(refusal)?: return .badTimeline("\(place): date: \(refusal)")
            case nil: return .badTimeline("\(place): date: expected an ISO 8601 date with a zone, like 2026-11-22T06:00:00Z")
            }
            let content = try entry.json("content") ?? "{}"
            var relevance: Double?
            if entry.has("relevance") {
                guard let number = try entry.plainNumber("relevance") else { return .badTimeline("\(place): relevance: expected a number") }
                relevance = number
            }
            var duration: Duration?
            if entry.has("duration") {
                guard let seconds = try entry.number("duration"), seconds.isFinite, seconds >= 0, seconds < 3.2e9 else {
                    return .badTimeline("\(place): duration: expected seconds, 0 or more")
                }
                duration = .milliseconds(Int64(seconds * 1000))
            }
            entries.append(TimelineEntry(date: date, content: content, relevance: relevance, duration: duration))
        }
        let policy: TimelinePolicy
        switch try object.choice("policy", words: ["atEnd", "never"]) {
        case .word("never"): policy = .never
        case .word, .absent: policy = .atEnd
        case let .after(date): policy = .after(date)
        case let .badAfter(reason): return .badTimeline("policy: expected {\"after\": ISO 8601 date}; after: \(reason)")
        case .other: return .badTimeline("policy: expected \"atEnd\", \"never\" or {\"after\": DATE}")
        }
        let fetched = try object.flag("upstreamFetch") ?? true
        return .timeline(Timeline(entries: entries, policy: policy), upstreamFetch: fetched)
    }

    // MARK: Activities

    private static func activity(_ verb: Any, _ o: [String: Any], owner: String, namespace: String, now: Instant) -> ResultLine {
        guard let verb = verb as? String else { return .badActivity("activity: expected start, update or end") }
        return activity(verb, FoundationFields(object: o), owner: owner, namespace: namespace, now: now)
    }

    /// One reading of an activity line for both decoders: `fields` answers as Foundation's casts
    /// do (`as? String`, `as? NSNumber`, `as? Bool`), or throws when it cannot tell (the fast path
    /// then hands the line to Foundation).
    private static func activity<F: ActivityFields>(_ verb: String, _ o: F, owner: String, namespace: String,
                                                    now: Instant) throws(F.Failure) -> ResultLine {
        guard let id = try o.text("id"), !id.isEmpty, id.utf8.count <= 128,
              id.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }),
              id.first != "." else {
            return .badActivity("activity \(verb): id: expected 1 to 128 letters, digits, '.', '_' or '-'")
        }
        var staleDate: Instant?, startAt: Instant?, timestamp: Instant?
        for key in ["staleDate", "startAt", "timestamp"] {
            switch try o.date(key) {
            case nil: continue
            case let .success(date)?:
                switch key {
                case "staleDate": staleDate = date
                case "startAt": startAt = date
                default: timestamp = date
                }
            case let .failure(refusal)?: return .badActivity("activity \(verb) \(id): \(key): \(refusal)")
            }
        }
        let relevance = try o.number("relevance")
        switch verb {
        case "start":
            guard let type = try o.text("type"), !type.isEmpty else {
                return .badActivity("activity start \(id): type: expected the activity's type name")
            }
            return .activity(.request(ActivityRequest(
                id: id, typeName: type, owner: owner, namespace: namespace,
                attributes: try o.json("attributes") ?? "{}", content: try o.json("content") ?? "{}",
                staleDate: staleDate, relevance: relevance,
                frequentUpdates: try o.flag("frequentUpdates") ?? false, startAt: startAt)))
        case "update":
            guard let content = try o.json("content") else { return .badActivity("activity update \(id): content: expected an object") }
            let priority: ActivityPriority
            switch try o.text("priority") {
            case nil, "low": priority = .low
            case "high": priority = .high
            default: return .badActivity("activity update \(id): priority: expected high or low")
            }
            return .activity(.update(ActivityUpdate(id: id, content: content, staleDate: staleDate,
                                                    relevance: relevance, timestamp: timestamp ?? now,
                                                    priority: priority)))
        case "end":
            let policy: DismissalPolicy
            switch try o.choice("dismissal", words: ["default", "immediate"]) {
            case .word("immediate"): policy = .immediate
            case .word, .absent: policy = .default
            case let .after(date): policy = .after(date)
            case let .badAfter(reason):
                return .badActivity("activity end \(id): dismissal: expected {\"after\": ISO 8601 date}; after: \(reason)")
            case .other: return .badActivity("activity end \(id): dismissal: expected default, immediate or {\"after\": DATE}")
            }
            return .activity(.end(id: id, content: try o.json("content"), policy: policy,
                                  timestamp: timestamp ?? now))
        default:
            return .badActivity("activity: expected start, update or end, found \(RunResults.preview(verb))")
        }
    }

    // MARK: The fast path

    /// `line` read without Foundation when it is an activity line within `StrictJSON`'s subset
    /// with fields of the types the line's vocabulary names; nil otherwise (read it with
    /// `RunResults.verdict` and `parse(object:)`, which decide every other line). Whatever it
    /// returns is what that path returns for the same line: `ResultLineFastPathTests` compares
    /// both on generated lines.
    package static func fastActivity(_ line: String, owner: String, namespace: String, now: Instant) -> ResultLine? {
        guard line.utf8.count <= RunResults.maxLineBytes, let members = StrictJSON.object(line) else { return nil }
        return fastActivity(members, owner: owner, namespace: namespace, now: now)
    }

    /// `line` read without Foundation when it is an activity line (`fastActivity`) or a timeline
    /// line within `StrictJSON`'s subset whose fields have the vocabulary's types; nil otherwise
    /// (`parse` decides). What a run's end hands the machines: a timeline provider's line.
    package static func fastParse(_ line: String, owner: String, namespace: String, now: Instant) -> ResultLine? {
        guard line.utf8.count <= RunResults.maxLineBytes, let members = StrictJSON.object(line) else { return nil }
        func has(_ key: String) -> Bool { members.contains { $0.key == key } }
        // `parse(object:)`'s order: an activity, then the reloads (left to Foundation), then a timeline.
        if has("activity") { return fastActivity(members, owner: owner, namespace: namespace, now: now) }
        guard !has("reloadTimelines"), !has("reloadAllTimelines"), has("entries") || has("policy") else { return nil }
        do throws(StrictFields.Unsure) {
            return try timeline(StrictFields(members: members))
        } catch {
            return nil
        }
    }

    /// `fastActivity` of a line already read by `StrictJSON.object` (which the line's
    /// `RunResults.verdict` accepts: the subset is JSON objects Foundation reads the same).
    package static func fastActivity(_ members: [StrictJSON.Member], owner: String, namespace: String, now: Instant) -> ResultLine? {
        guard let verb = members.first(where: { $0.key == "activity" }), case let .string(verb) = verb.value else { return nil }
        do throws(StrictFields.Unsure) {
            return try activity(verb, StrictFields(members: members), owner: owner, namespace: namespace, now: now)
        } catch {
            return nil
        }
    }

    // MARK: Helpers

    /// A value that is one of `words`, or `{"after": DATE}` (timeline policies, dismissals).
    fileprivate enum Choice: Equatable {
        case absent, word(String), after(Instant), badAfter(String), other
    }

    fileprivate static func choice(_ value: Any?, words: [String]) -> Choice {
        switch value {
        case nil: return .absent
        case let text as String where words.contains(text): return .word(text)
        case let after as [String: Any]:
            guard let value = after["after"] else { return .badAfter("missing") }
            switch date(value) {
            case let .success(instant): return .after(instant)
            case let .failure(refusal): return .badAfter(refusal.description)
            }
        default: return .other
        }
    }

    /// Canonical compact JSON (sorted keys), so equal content is equal text.
    package static func compactJSON(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// An ISO 8601 date with a zone, parsed strictly (`ISO8601.parseStrict`), or why not.
    package static func date(_ value: Any) -> Result<Instant, ISO8601.Refusal> {
        guard let text = value as? String else {
            return .failure(ISO8601.Refusal(description: "expected an ISO 8601 date with a zone as a string, like 2026-11-22T06:00:00Z"))
        }
        return ISO8601.parseStrict(text)
    }
}

/// The fields of an activity line, read as `ResultLine` reads them.
private protocol ActivityFields {
    associatedtype Failure: Error
    /// `value as? String`.
    func text(_ key: String) throws(Failure) -> String?
    /// `(value as? NSNumber)?.doubleValue`.
    func number(_ key: String) throws(Failure) -> Double?
    /// `value as? Bool`.
    func flag(_ key: String) throws(Failure) -> Bool?
    /// The value's canonical compact JSON, if present.
    func json(_ key: String) throws(Failure) -> String?
    /// `ResultLine.date` of the value, if present.
    func date(_ key: String) throws(Failure) -> Result<Instant, ISO8601.Refusal>?
    /// `ResultLine.choice` of the value.
    func choice(_ key: String, words: [String]) throws(Failure) -> ResultLine.Choice
    /// Whether the key is present.
    func has(_ key: String) -> Bool
    /// `value as? NSNumber` where `!(value is Bool)`: its `doubleValue`, nil when it is not one.
    func plainNumber(_ key: String) throws(Failure) -> Double?
    /// `value as? [Any]`, each element `as? [String: Any]` (nil where it is not an object).
    func objects(_ key: String) throws(Failure) -> [Self?]?
}

/// A line decoded by `JSONSerialization`: the reference.
private struct FoundationFields: ActivityFields {
    let object: [String: Any]

    func text(_ key: String) -> String? { object[key] as? String }
    func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
    func flag(_ key: String) -> Bool? { object[key] as? Bool }
    func json(_ key: String) -> String? { object[key].map(ResultLine.compactJSON) }
    func date(_ key: String) -> Result<Instant, ISO8601.Refusal>? { object[key].map(ResultLine.date) }
    func choice(_ key: String, words: [String]) -> ResultLine.Choice { ResultLine.choice(object[key], words: words) }
    func has(_ key: String) -> Bool { object[key] != nil }
    func plainNumber(_ key: String) -> Double? {
        guard let value = object[key], let number = value as? NSNumber, !(value is Bool) else { return nil }
        return number.doubleValue
    }
    func objects(_ key: String) -> [FoundationFields?]? {
        (object[key] as? [Any])?.map { ($0 as? [String: Any]).map(FoundationFields.init(object:)) }
    }
}

/// A line read by `StrictJSON`: answers only where the field has the type the vocabulary names
/// (where Foundation's cast is plain), and is unsure otherwise (a number where a flag goes: is
/// `1` a `Bool` to `as?`?), which hands the whole line to Foundation.
private struct StrictFields: ActivityFields {
    struct Unsure: Error {}
    let members: [StrictJSON.Member]

    func value(_ key: String) -> StrictJSON.Value? { members.first { $0.key == key }?.value }

    func text(_ key: String) throws(Unsure) -> String? {
        switch value(key) {
        case nil: return nil
        case let .string(text)?: return text
        default: throw Unsure()
        }
    }

    func number(_ key: String) throws(Unsure) -> Double? {
        switch value(key) {
        case nil: return nil
        case let .integer(number)?: return Double(number)
        case let .decimal(number)?: return number
        default: throw Unsure()
        }
    }

    func flag(_ key: String) throws(Unsure) -> Bool? {
        switch value(key) {
        case nil: return nil
        case let .bool(flag)?: return flag
        default: throw Unsure()
        }
    }

    func json(_ key: String) throws(Unsure) -> String? {
        guard let value = value(key) else { return nil }
        guard let text = StrictJSON.compact(value) else { throw Unsure() }
        return text
    }

    func date(_ key: String) throws(Unsure) -> Result<Instant, ISO8601.Refusal>? {
        guard let text = try text(key) else { return nil }
        return ISO8601.parseStrict(text)
    }

    func choice(_ key: String, words: [String]) throws(Unsure) -> ResultLine.Choice {
        switch value(key) {
        case nil: return .absent
        case let .string(text)?: return words.contains(text) ? .word(text) : .other
        case let .object(members)?:
            guard let after = members.first(where: { $0.key == "after" }) else { return .badAfter("missing") }
            guard case let .string(text) = after.value else { throw Unsure() }
            switch ISO8601.parseStrict(text) {
            case let .success(instant): return .after(instant)
            case let .failure(refusal): return .badAfter(refusal.description)
            }
        default: throw Unsure()
        }
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    /// Left to Foundation when present: whether a parsed `1` `is Bool` is its answer to give.
    func plainNumber(_ key: String) throws(Unsure) -> Double? {
        guard value(key) == nil else { throw Unsure() }
        return nil
    }

    func objects(_ key: String) throws(Unsure) -> [StrictFields?]? {
        switch value(key) {
        case nil: return nil
        case let .array(values)?:
            return values.map { value in
                if case let .object(members) = value { return StrictFields(members: members) }
                return nil
            }
        default: throw Unsure()
        }
    }
}
