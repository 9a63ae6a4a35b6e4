import RefreshdCore

/// Schedules, durations and instants as a person reads them.
enum Words {
    /// "every day at 04:00 (Europe/Paris), up to 10 min later"; "every 1 min after each launch";
    /// "when asked (no schedule)".
    static func schedule(_ spec: JobSpec) -> String {
        let d = spec.definition
        var text: String
        switch d.resubmit {
        case .none:
            text = spec.widget != nil ? "widget \(spec.widget!.kind): when its timeline asks for a reload" : "when asked (no schedule)"
        case let .after(interval):
            text = "every \(duration(interval)) after each launch"
        case let .calendar(schedule):
            text = calendar(schedule.text)
        }
        if d.accuracy > .zero { text += ", up to \(duration(d.accuracy)) later" }
        if d.jitter > .zero { text += ", plus a random delay of up to \(duration(d.jitter))" }
        return text
    }

    /// A calendar's text (`EXPRESSION [ZONE]`, as `CalendarScheduleBuilder` names it) in words
    /// for the common shapes; other expressions are quoted as written.
    static func calendar(_ text: String) -> String {
        var expression = Substring(text)
        var zone = ""
        if text.hasSuffix("]"), let open = text.lastIndex(of: "[") {
            zone = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
            expression = text[..<open]
            while expression.hasSuffix(" ") { expression = expression.dropLast() }
        }
        let zoned = zone.isEmpty ? "" : " (\(zone))"
        let words: String? = {
            switch expression {
            case "minutely": return "every minute"
            case "hourly": return "every hour, on the hour"
            case "daily": return "every day at 00:00"
            case "weekly": return "every Monday at 00:00"
            case "monthly": return "on the 1st of every month at 00:00"
            default: break
            }
            let parts = expression.split(separator: " ")
            // systemd: `*-*-* HH:MM[:SS]`, with an optional weekday list before it.
            if parts.count == 2, parts[0] == "*-*-*", let time = clock(parts[1]) { return "every day at \(time)" }
            if parts.count == 3, parts[1] == "*-*-*", let time = clock(parts[2]) { return "on \(parts[0]) at \(time)" }
            if parts.count == 1, let time = clock(parts[0]) { return "every day at \(time)" }
            // cron: `M H * * *`.
            if parts.count == 5, parts[2] == "*", parts[3] == "*", let m = Int(parts[0]), let h = Int(parts[1]) {
                let time = two(h) + ":" + two(m)
                return parts[4] == "*" ? "every day at \(time)" : "at \(time) on weekdays \(parts[4]) (cron)"
            }
            if parts.count == 5, parts[0].hasPrefix("*/"), parts[1...].allSatisfy({ $0 == "*" }), let n = Int(parts[0].dropFirst(2)) {
                return "every \(n) min (cron)"
            }
            return nil
        }()
        return (words ?? "on calendar “\(expression)”") + zoned
    }

    /// `HH:MM` or `HH:MM:SS` (seconds shown only when not zero), or nil.
    static func clock(_ text: Substring) -> String? {
        let fields = text.split(separator: ":").map { Int($0) }
        guard (2...3).contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
        let h = fields[0]!, m = fields[1]!, s = fields.count == 3 ? fields[2]! : 0
        guard (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s) else { return nil }
        return two(h) + ":" + two(m) + (s == 0 ? "" : ":" + two(s))
    }

    static func two(_ n: Int) -> String { String(n).leftPadded(to: 2) }

    /// "250 ms", "10 s", "5 min", "2 h 30 min", "3 d".
    static func duration(_ d: Duration) -> String { milliseconds(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) }

    static func milliseconds(_ ms: Int64) -> String {
        if ms < 1000 { return "\(ms) ms" }
        let s = ms / 1000
        if s < 60 { return ms % 1000 == 0 || s >= 10 ? "\(s) s" : String(format: "%.1f s", Double(ms) / 1000) }
        if s < 3600 { return s % 60 == 0 ? "\(s / 60) min" : "\(s / 60) min \(s % 60) s" }
        if s < 86_400 { return (s % 3600) / 60 == 0 ? "\(s / 3600) h" : "\(s / 3600) h \((s % 3600) / 60) min" }
        return (s % 86_400) / 3600 == 0 ? "\(s / 86_400) d" : "\(s / 86_400) d \((s % 86_400) / 3600) h"
    }

    /// "in 5 min", "3 s ago", "now".
    static func relative(_ t: Instant, now: Instant) -> String {
        let delta = t.milliseconds - now.milliseconds
        if abs(delta) < 1000 { return "now" }
        return delta > 0 ? "in \(milliseconds(delta))" : "\(milliseconds(-delta)) ago"
    }

    /// `2026-11-26 10:04:05Z`.
    static func time(_ t: Instant) -> String {
        let iso = t.iso8601
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + "Z"
    }
}

import Foundation
