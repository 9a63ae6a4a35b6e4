import Foundation
import RefreshdCalendar
import RefreshdCore

/// Turns a calendar expression and a time zone into the core's zone-free `Schedule`.
///
/// The core only asks "the next slot after this instant"; this is where that question is
/// answered with `RefreshdCalendar` in a real IANA zone. The schedule's text is
/// `EXPRESSION [ZONE]` (`*-*-* 04:00 [Europe/Paris]`): it names both, because config reload
/// compares schedules by their text, so moving a job to another zone counts as a change.
package enum CalendarScheduleBuilder {
    /// Parses `expression` and builds its schedule in `zone`; a zone suffix in the expression
    /// (`*-*-* 04:00 UTC`) wins over `zone`.
    package static func schedule(_ expression: String, zone: TimeZone) throws(CalendarParseError) -> Schedule {
        schedule(try CalendarSchedule(parsing: expression), zone: zone)
    }

    /// The schedule of an already parsed expression in `zone` (or in the expression's own zone).
    package static func schedule(_ calendar: CalendarSchedule, zone: TimeZone) -> Schedule {
        let effective = calendar.timeZone ?? zone
        return Schedule("\(calendar.source) [\(effective.identifier)]") { instant in
            nextElapse(of: calendar, after: instant, in: effective)
        }
    }

    /// The zone a schedule built here is evaluated in, read back from its text; nil for a
    /// schedule made elsewhere (whose text has no `[ZONE]` suffix).
    package static func zone(of schedule: Schedule) -> TimeZone? {
        guard schedule.text.hasSuffix("]"), let open = schedule.text.lastIndex(of: "[") else { return nil }
        let name = schedule.text[schedule.text.index(after: open)..<schedule.text.index(before: schedule.text.endIndex)]
        return TimeZone(identifier: String(name))
    }

    /// Up to `count` successive slots of `schedule` strictly after `instant`.
    package static func elapses(of schedule: Schedule, after instant: Instant, count: Int) -> [Instant] {
        var result: [Instant] = []
        var cursor = instant
        while result.count < count, let next = schedule.next(after: cursor) {
            result.append(next)
            cursor = next
        }
        return result
    }

    /// The first elapse strictly after `instant`, rounded to the millisecond. An elapse with a
    /// sub-millisecond part that rounds back onto `instant` is stepped over, so `next(after:)`
    /// always moves forward.
    static func nextElapse(of calendar: CalendarSchedule, after instant: Instant, in zone: TimeZone) -> Instant? {
        var base = Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
        for _ in 0..<8 {
            guard let date = calendar.nextElapse(after: base, in: zone) else { return nil }
            let next = Instant(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
            if next > instant { return next }
            base = date
        }
        return nil
    }
}
