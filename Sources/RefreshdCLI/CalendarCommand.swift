import ArgumentParser
import Foundation
import RefreshdCalendar
import RefreshdCore

/// `refreshd calendar EXPR`: shows how a calendar expression is understood and when it
/// elapses next, in the style of `systemd-analyze calendar`, so job authors can check an
/// `OnCalendar`/cron schedule before deploying it.
package struct CalendarCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "calendar",
        abstract: "Normalize a calendar expression and show its next elapses.",
        discussion: """
            EXPR is a systemd calendar event (e.g. "Mon..Fri *-*-* 09:00", "daily", \
            "*-*~01 12:00 Europe/Paris") or a 5-field cron line (e.g. "30 2 * * 1-5", "@hourly").
            """)

    @Argument(help: "The calendar expression.")
    var expression: String

    @Option(help: "Number of elapses to show.")
    var iterations: Int = 1

    @Option(help: "Base time as ISO 8601 (e.g. 2026-11-21T12:00:00Z); default now.")
    var base: String?

    @Option(help: "IANA time zone to evaluate in; default the machine's (honours TZ).")
    var timezone: String?

    @Flag(help: "Print a JSON array of ISO 8601 UTC instants.")
    var json = false

    package func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
    }

    package func run() throws {
        let schedule: CalendarSchedule
        do {
            schedule = try CalendarSchedule(parsing: expression)
        } catch {
            let prefix = "refreshd: calendar: "
            let caret = String(repeating: " ", count: prefix.count + error.column - 1) + "^"
            FileHandle.standardError.write(Data("\(prefix)\(expression): \(error)\n\(caret)\n".utf8))
            throw ExitCode(1)
        }
        // An option's bad value is reported as the expression's is (exit 1), not as a usage error.
        func refuse(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("refreshd: calendar: \(message)\n".utf8))
            return ExitCode(1)
        }
        guard let zone = resolveZone() else {
            let name = timezone ?? ""
            throw refuse("--timezone \(EchoText.quoted(name, limit: 80)): expected an IANA time zone like Europe/Paris (or UTC)"
                + (PlainWords.zoneHint(for: name).map { "; \($0)" } ?? ""))
        }
        guard let baseDate = resolveBase() else {
            throw refuse("--base \(EchoText.quoted(base ?? "", limit: 80)): expected an ISO 8601 date and time, e.g. 2026-11-21T12:00:00Z")
        }
        let dates = schedule.elapses(after: baseDate, in: zone, count: iterations)
        if json {
            let items = dates.map { "\"\(Self.isoUTC($0))\"" }
            print("[" + items.joined(separator: ", ") + "]")
            return
        }
        print("  Original form: \(expression)")
        print("Normalized form: \(schedule.normalized)")
        let shownZone = schedule.timeZone ?? zone
        if dates.isEmpty { print("    Next elapse: never") }
        for (index, date) in dates.enumerated() {
            let label = index == 0 ? "Next elapse" : "Iteration #\(index + 1)"
            print(Self.pad(label) + ": " + Self.format(date, in: shownZone))
            print(Self.pad("(in UTC)") + ": " + Self.format(date, in: TimeZone(identifier: "UTC")!))
        }
    }

    /// The zone `--timezone` names (nil: it names none), else the machine's.
    private func resolveZone() -> TimeZone? {
        guard let timezone else { return TimeZone.current }
        return TimeZone(identifier: timezone)
    }

    /// The instant `--base` gives (nil: it is no ISO 8601 date and time), else now.
    private func resolveBase() -> Date? {
        guard let base else { return Date() }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: base) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return formatter.date(from: base)
    }

    private static func pad(_ label: String) -> String {
        String(repeating: " ", count: max(0, 15 - label.count)) + label
    }

    /// `Sat 2026-11-21 04:00:00 UTC`, like systemd's timestamps; fractions are shown when present.
    static func format(_ date: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        let hasFraction = date.timeIntervalSince1970.rounded(.down) != date.timeIntervalSince1970
        formatter.dateFormat = hasFraction ? "EEE yyyy-MM-dd HH:mm:ss.SSSSSS" : "EEE yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date) + " " + abbreviation(of: zone, at: date)
    }

    /// The zone's abbreviation at `date` ("EST", "BST", "+1030") as the C library reports it,
    /// since Foundation on Linux often answers "GMT-5". A one-shot command may set TZ briefly.
    static func abbreviation(of zone: TimeZone, at date: Date) -> String {
        if zone.secondsFromGMT(for: date) == 0 && ["UTC", "GMT", "Etc/UTC"].contains(zone.identifier) { return "UTC" }
        #if canImport(Glibc)
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", ":" + zone.identifier, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        if localtime_r(&seconds, &parts) != nil, let name = parts.tm_zone {
            return String(cString: name)
        }
        #endif
        return zone.abbreviation(for: date) ?? zone.identifier
    }

    static func isoUTC(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        if date.timeIntervalSince1970.rounded(.down) != date.timeIntervalSince1970 {
            formatter.formatOptions.insert(.withFractionalSeconds)
        }
        return formatter.string(from: date)
    }
}
