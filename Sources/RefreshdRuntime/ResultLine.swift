import Foundation
import RefreshdCore

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
public enum ResultLine: Sendable, Hashable {
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
    case other

    /// Whether the line is applied at once, while its run goes on.
    public var isLive: Bool {
        switch self {
        case .reloadTimelines, .reloadAllTimelines, .activity, .badActivity: true
        default: false
        }
    }

    /// Reads one line (already checked to be one JSON object). `owner` and `namespace` are the
    /// run's job's, given to activities it starts; `now` stamps updates without a timestamp.
    public static func parse(_ line: String, owner: String, namespace: String, now: Instant) -> ResultLine {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            return .other
        }
        return parse(object: object, owner: owner, namespace: namespace, now: now)
    }

    /// Reads one line already decoded (`RunResults.verdict`).
    public static func parse(object: [String: Any], owner: String, namespace: String, now: Instant) -> ResultLine {
        if let verb = object["activity"] { return activity(verb, object, owner: owner, namespace: namespace, now: now) }
        if let kind = object["reloadTimelines"] {
            guard let kind = kind as? String, !kind.isEmpty else { return .badActivity("reloadTimelines: expected a widget kind") }
            return .reloadTimelines(kind: kind)
        }
        if object["reloadAllTimelines"] != nil { return .reloadAllTimelines }
        if object["entries"] != nil || object["policy"] != nil { return timeline(object) }
        if let reason = object["waiting"] {
            guard let reason = reason as? String, !reason.isEmpty else { return .badTimeline("waiting: expected the reason, a string") }
            return .waiting(reason)
        }
        return .other
    }

    // MARK: Timelines

    private static func timeline(_ object: [String: Any]) -> ResultLine {
        guard let items = object["entries"] as? [Any] else { return .badTimeline("entries: expected a list of entries") }
        var entries: [TimelineEntry] = []
        for (index, item) in items.enumerated() {
            let place = "entry \(index + 1)"
            guard let entry = item as? [String: Any] else { return .badTimeline("\(place): expected an object") }
            let date: Instant
            switch entry["date"].map(Self.date) {
            case let .success(value)?: date = value
            case let .failure(refusal)?: return .badTimeline("\(place): date: \(refusal)")
            case nil: return .badTimeline("\(place): date: expected an ISO 8601 date with a zone, like 2026-11-22T06:00:00Z")
            }
            let content = entry["content"].map(compactJSON) ?? "{}"
            var relevance: Double?
            if let value = entry["relevance"] {
                guard let number = value as? NSNumber, !(value is Bool) else { return .badTimeline("\(place): relevance: expected a number") }
                relevance = number.doubleValue
            }
            var duration: Duration?
            if let value = entry["duration"] {
                guard let seconds = (value as? NSNumber)?.doubleValue, seconds.isFinite, seconds >= 0, seconds < 3.2e9 else {
                    return .badTimeline("\(place): duration: expected seconds, 0 or more")
                }
                duration = .milliseconds(Int64(seconds * 1000))
            }
            entries.append(TimelineEntry(date: date, content: content, relevance: relevance, duration: duration))
        }
        let policy: TimelinePolicy
        switch choice(object["policy"], words: ["atEnd", "never"]) {
        case .word("never"): policy = .never
        case .word, .absent: policy = .atEnd
        case let .after(date): policy = .after(date)
        case let .badAfter(reason): return .badTimeline("policy: expected {\"after\": ISO 8601 date}; after: \(reason)")
        case .other: return .badTimeline("policy: expected \"atEnd\", \"never\" or {\"after\": DATE}")
        }
        let fetched = (object["upstreamFetch"] as? Bool) ?? true
        return .timeline(Timeline(entries: entries, policy: policy), upstreamFetch: fetched)
    }

    // MARK: Activities

    private static func activity(_ verb: Any, _ o: [String: Any], owner: String, namespace: String, now: Instant) -> ResultLine {
        guard let verb = verb as? String else { return .badActivity("activity: expected start, update or end") }
        guard let id = o["id"] as? String, !id.isEmpty, id.utf8.count <= 128,
              id.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }),
              id.first != "." else {
            return .badActivity("activity \(verb): id: expected 1 to 128 letters, digits, '.', '_' or '-'")
        }
        var dates: [String: Instant] = [:]
        for key in ["staleDate", "startAt", "timestamp"] {
            guard let value = o[key] else { continue }
            switch Self.date(value) {
            case let .success(date): dates[key] = date
            case let .failure(refusal): return .badActivity("activity \(verb) \(id): \(key): \(refusal)")
            }
        }
        let relevance = (o["relevance"] as? NSNumber)?.doubleValue
        switch verb {
        case "start":
            guard let type = o["type"] as? String, !type.isEmpty else {
                return .badActivity("activity start \(id): type: expected the activity's type name")
            }
            return .activity(.request(ActivityRequest(
                id: id, typeName: type, owner: owner, namespace: namespace,
                attributes: o["attributes"].map(compactJSON) ?? "{}", content: o["content"].map(compactJSON) ?? "{}",
                staleDate: dates["staleDate"], relevance: relevance,
                frequentUpdates: (o["frequentUpdates"] as? Bool) ?? false, startAt: dates["startAt"])))
        case "update":
            guard let content = o["content"] else { return .badActivity("activity update \(id): content: expected an object") }
            let priority: ActivityPriority
            switch o["priority"] as? String {
            case nil, "low": priority = .low
            case "high": priority = .high
            default: return .badActivity("activity update \(id): priority: expected high or low")
            }
            return .activity(.update(ActivityUpdate(id: id, content: compactJSON(content), staleDate: dates["staleDate"],
                                                    relevance: relevance, timestamp: dates["timestamp"] ?? now,
                                                    priority: priority)))
        case "end":
            let policy: DismissalPolicy
            switch choice(o["dismissal"], words: ["default", "immediate"]) {
            case .word("immediate"): policy = .immediate
            case .word, .absent: policy = .default
            case let .after(date): policy = .after(date)
            case let .badAfter(reason):
                return .badActivity("activity end \(id): dismissal: expected {\"after\": ISO 8601 date}; after: \(reason)")
            case .other: return .badActivity("activity end \(id): dismissal: expected default, immediate or {\"after\": DATE}")
            }
            return .activity(.end(id: id, content: o["content"].map(compactJSON), policy: policy,
                                  timestamp: dates["timestamp"] ?? now))
        default:
            return .badActivity("activity: expected start, update or end, found \(RunResults.preview(verb))")
        }
    }

    // MARK: Helpers

    /// A value that is one of `words`, or `{"after": DATE}` (timeline policies, dismissals).
    private enum Choice: Equatable {
        case absent, word(String), after(Instant), badAfter(String), other
    }

    private static func choice(_ value: Any?, words: [String]) -> Choice {
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
    static func compactJSON(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// An ISO 8601 date with a zone, parsed strictly (`ISO8601.parseStrict`), or why not.
    static func date(_ value: Any) -> Result<Instant, ISO8601.Refusal> {
        guard let text = value as? String else {
            return .failure(ISO8601.Refusal(description: "expected an ISO 8601 date with a zone as a string, like 2026-11-22T06:00:00Z"))
        }
        return ISO8601.parseStrict(text)
    }
}
