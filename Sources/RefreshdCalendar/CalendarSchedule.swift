import Foundation

/// A recurring calendar schedule parsed from a systemd `OnCalendar=` expression
/// (`Mon..Fri *-*-* 09:00`, `daily`, `*-*~01 Europe/Paris`) or a 5-field cron line
/// (`30 2 * * 1-5`, `@hourly`), with its next elapse times in any IANA time zone.
///
/// Evaluation follows systemd 252's algorithm, so results match `systemd-analyze calendar`,
/// including across DST: a wall-clock time inside a spring-forward gap is skipped (except where
/// a wider pattern such as `*:0/20` lands past the gap), and a time repeated by a fall-back
/// overlap fires once, in the offset in force when the walk reaches it (normally the first).
/// The type is a pure value: no clock reads, no I/O beyond Foundation's zone data.
package struct CalendarSchedule: Sendable, Equatable {
    /// The expression as given.
    package let source: String
    /// One spec for systemd expressions; two for cron lines whose day-of-month and
    /// day-of-week are both restricted (either may match).
    let specs: [CalendarSpec]
    /// Parsed as cron: evaluated without systemd's DST quirks (see `NextElapseSearch`).
    let isCron: Bool

    /// Parses `expression`; cron is recognised by shape (an `@` alias, or five fields without
    /// `:`, `.` or `~`), anything else is read as a systemd calendar event.
    package init(parsing expression: String) throws(CalendarParseError) {
        source = expression
        if let words = PlainWords.everyPhrase(expression) { throw words }
        isCron = CronParser.looksLikeCron(expression)
        specs = isCron
            ? try CronParser.parse(expression)
            : [try SystemdParser.parse(expression)]
    }

    /// The systemd form `systemd-analyze calendar` prints as "Normalized form:". A cron line
    /// that needs both day rules shows its two systemd equivalents joined by " | ".
    package var normalized: String {
        specs.map(\.normalizedString).joined(separator: " | ")
    }

    /// The zone named by the expression's suffix (`UTC`, `Europe/Paris`), if any; it overrides
    /// the zone passed to `nextElapse(after:in:)`.
    package var timeZone: TimeZone? {
        guard let spec = specs.first else { return nil }
        if spec.utc { return TimeZone(identifier: "UTC") }
        return spec.zoneName.flatMap(TimeZone.init(identifier:))
    }

    /// The first elapse strictly after `base`, evaluated in the expression's own zone if it
    /// names one, else in `zone`. Nil when the schedule never elapses again (before 2200).
    ///
    /// Inside a fall-back overlap systemd can compute an elapse *before* its base (the earlier
    /// copy of the hour); such results are stepped over, so the answer is always after `base`.
    package func nextElapse(after base: Date, in zone: TimeZone) -> Date? {
        let effectiveZone = timeZone ?? zone
        let baseMicros = Self.microseconds(base)
        let candidates = specs.compactMap { spec in
            // Cron has no systemd behaviour to reproduce, so it always takes the plain answer.
            nextMicroseconds(spec, after: baseMicros, in: effectiveZone, systemdQuirks: !isCron)
        }
        guard let next = candidates.min() else { return nil }
        let seconds = CivilTime.floorDiv(next, CalendarSpec.microsecondsPerSecond)
        let micros = next - seconds * CalendarSpec.microsecondsPerSecond
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(micros) / 1e6)
    }

    /// How many backward results (each at most an hour's worth of matches) to step over.
    static let maxStepsBack = 4000

    /// Runs systemd's search for one spec. Where systemd would give up (its step limit) or the
    /// walk lands at or before the base, retries without the DST-flag quirk; results still at or
    /// before the base (a fall-back overlap read in the earlier offset) are stepped over.
    private func nextMicroseconds(_ spec: CalendarSpec, after base: Int, in zone: TimeZone,
                                  systemdQuirks: Bool) -> Int? {
        var cursor = base
        var quirks = systemdQuirks
        for _ in 0..<Self.maxStepsBack {
            let cursorSecond = CivilTime.floorDiv(cursor, CalendarSpec.microsecondsPerSecond)
            var search = NextElapseSearch(spec: spec, clock: ZoneClock(zone: zone, startingAt: cursorSecond),
                                          honoursDSTFlag: quirks)
            guard let next = search.next(afterMicroseconds: cursor) else {
                guard search.gaveUp, quirks else { return nil }
                quirks = false
                continue
            }
            if next > base { return next }
            if quirks {
                // A backward answer here comes from the DST-flag quirk; the plain walk agrees
                // with systemd-analyze in the cases we have compared.
                quirks = false
                continue
            }
            cursor = next
        }
        return nil
    }

    /// Up to `count` successive elapses after `base` (fewer if the schedule runs out).
    package func elapses(after base: Date, in zone: TimeZone, count: Int) -> [Date] {
        var result: [Date] = []
        var cursor = base
        while result.count < count, let next = nextElapse(after: cursor, in: zone) {
            result.append(next)
            cursor = next
        }
        return result
    }

    /// Microseconds since the epoch, to the nearest microsecond.
    static func microseconds(_ date: Date) -> Int {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let fraction = ((date.timeIntervalSince1970 - seconds) * 1e6).rounded()
        return Int(seconds) * CalendarSpec.microsecondsPerSecond + Int(fraction)
    }
}
