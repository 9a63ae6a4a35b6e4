import Foundation
import RefreshdCore

/// What a person writes for a schedule or a zone in plain words, answered with the syntax meant.
package enum PlainWords {
    /// `every 5 minutes`, `every hour`, `every day`: no calendar syntax, but what it meant is
    /// clear, so the refusal says how to write it (`*:0/5`) instead of reading the last word as
    /// a time zone. Nil for anything else.
    static func everyPhrase(_ text: String) -> CalendarParseError? {
        let words = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.first == "every" else { return nil }
        let start = text.firstIndex { $0 != " " && $0 != "\t" }.map { text.distance(from: text.startIndex, to: $0) } ?? 0
        var rest = words.dropFirst()
        let count = rest.first.flatMap { Int($0) }.flatMap { $0 >= 1 && $0 <= 59 ? $0 : nil }
        if count != nil { rest = rest.dropFirst() }
        let n = count ?? 1
        var unit = rest.first ?? ""
        if unit.hasSuffix("s") && unit.count > 2 { unit.removeLast() }
        let syntax: String? = switch unit {
        case "second", "sec": "*:*:0/\(n)"
        case "minute", "min": n == 1 ? "minutely (*:*:00), or the cron line * * * * *" : "*:0/\(n), or the cron line */\(n) * * * *"
        case "hour": n == 1 ? "hourly (*:00:00), or the cron line 0 * * * *" : "0/\(n):00, or the cron line 0 */\(n) * * *"
        case "day": n == 1 ? "daily (00:00), or a time such as 06:00" : nil
        case "week": n == 1 ? "weekly (Mon 00:00), or a day and time such as Mon 06:00" : nil
        case "month": n == 1 ? "monthly (the 1st at 00:00), or *-*-01 06:00" : nil
        default: nil
        }
        let phrase = (["every"] + (count.map { ["\($0)"] } ?? []) + rest.prefix(1)).joined(separator: " ")
        let hint = syntax.map { "for \(phrase) write \($0)" }
            ?? "e.g. *:0/5 is every 5 minutes, hourly, daily, Mon..Fri 06:00, or a cron line such as */5 * * * *"
        return CalendarParseError(column: start + 1, expected: "a calendar expression (systemd's syntax or a cron line), not words",
                                  found: text.trimmingCharacters(in: .whitespaces), hint: hint)
    }

    /// Up to three IANA zone names near `name` (`Europe/Berln` → `Europe/Berlin`): one or two
    /// edits away, ignoring case, or the zone whose city it names alone (`Berlin`).
    package static func zoneSuggestions(for name: String) -> [String] {
        guard !name.isEmpty, name.utf8.count <= 64 else { return [] }
        let lower = name.lowercased()
        var scored: [(name: String, distance: Int)] = []
        for zone in TimeZone.knownTimeZoneIdentifiers {
            let candidate = zone.lowercased()
            let city = candidate.split(separator: "/").last.map(String.init) ?? candidate
            let distance = min(EditDistance.between(lower, candidate, limit: 2),
                               city == lower || city == lower.replacingOccurrences(of: " ", with: "_") ? 0 : 3)
            if distance <= 2 { scored.append((zone, distance)) }
        }
        return scored.sorted { ($0.distance, $0.name) < ($1.distance, $1.name) }.prefix(3).map(\.name)
    }

    /// `did you mean Europe/Berlin?` (or two or three names), nil without a near one.
    package static func zoneHint(for name: String) -> String? {
        let near = zoneSuggestions(for: name)
        guard !near.isEmpty else { return nil }
        return "did you mean " + near.joined(separator: " or ") + "?"
    }
}
