import Foundation
import RefreshdConfig
import RefreshdCore

/// Days and times of day in one IANA zone, against instants: which day it is somewhere, and when
/// a switch time happens there (daylight saving included).
package struct ZoneCalendar: Sendable, Hashable {
    package let zone: TimeZone

    package init(zone: TimeZone) { self.zone = zone }

    /// The zone named `identifier` (e.g. `Europe/Paris`), or nil if the system does not know it.
    package init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }

    private func offset(atSeconds seconds: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }

    /// The day it is in this zone at `instant`.
    package func date(of instant: Instant) -> CivilDate {
        let seconds = floorDiv(instant.milliseconds, 1000)
        return CivilDate(dayNumber: floorDiv(seconds + offset(atSeconds: seconds), 86_400))
    }

    /// The instant the wall clock reads `time` on `date`. In a fall-back overlap the first
    /// occurrence; in a spring-forward gap the reading pushed forward by the gap.
    package func instant(of date: CivilDate, at time: ClockTime) -> Instant {
        let local = date.dayNumber * 86_400 + Int64(time.minutes) * 60
        let before = offset(atSeconds: local - 86_400), after = offset(atSeconds: local + 86_400)
        let valid = [before, after].map { local - $0 }.filter { $0 + offset(atSeconds: $0) == local }
        let seconds = valid.min() ?? local - before
        return Instant(milliseconds: seconds * 1000)
    }

    /// Midnight starting `date` (or the first instant of that day if midnight is skipped).
    package func start(of date: CivilDate) -> Instant {
        instant(of: date, at: .midnight)
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}
