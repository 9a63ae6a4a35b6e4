import Foundation
import RefreshdConfig
import RefreshdCore

/// What a modelled timeline provider writes: the entries' dates and the results line of a run,
/// which the real runtime parses and checks (the model itself is config data, `TimelineModel`).
extension TimelineModel {
    /// The entries' dates and content for a run at `now`, days read in `zone`.
    package func entryDates(at now: Instant, zone: TimeZone) -> [(date: Instant, content: String)] {
        switch entries {
        case .now:
            return [(now, "now")]
        case let .every(step, count):
            let step = max(step, .seconds(1))
            return (1...max(1, count)).map { k in (now + step * k, "t+\(k)") }
        case let .timesOfDay(minutes):
            let sorted = Array(Set(minutes)).sorted()
            guard !sorted.isEmpty else { return [(now, "now")] }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let date = Date(timeIntervalSince1970: Double(now.milliseconds) / 1000)
            let midnight = calendar.startOfDay(for: date)
            var occurrences: [(Instant, Int)] = []
            for dayOffset in -1...1 {
                guard let day = calendar.date(byAdding: .day, value: dayOffset, to: midnight) else { continue }
                for m in sorted {
                    guard let t = calendar.date(bySettingHour: m / 60, minute: m % 60, second: 0, of: day) else { continue }
                    occurrences.append((Instant(milliseconds: Int64((t.timeIntervalSince1970 * 1000).rounded())), m))
                }
            }
            occurrences.sort { $0.0 < $1.0 }
            var result: [(Instant, String)] = []
            if let current = occurrences.last(where: { $0.0 <= now }) { result.append((now, Self.label(current.1))) }
            for (t, m) in occurrences where t > now && t <= now + .seconds(86_400) { result.append((t, Self.label(m))) }
            return result
        }
    }

    /// The results line of a run at `now`: `{"entries": [...], "policy": ..., "upstreamFetch": ...}`.
    package func resultLine(at now: Instant, zone: TimeZone, upstreamFetch fetched: Bool) -> String {
        let items = entryDates(at: now, zone: zone).map { entry in
            "{\"date\":\"\(entry.date.iso8601)\",\"content\":{\"asset\":\"\(entry.content)\"}}"
        }
        let policyText: String
        switch policy {
        case .atEnd: policyText = "\"atEnd\""
        case .never: policyText = "\"never\""
        case let .after(span): policyText = "{\"after\":\"\((now + span).iso8601)\"}"
        case .afterTomorrow:
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let date = Date(timeIntervalSince1970: Double(now.milliseconds) / 1000)
            let tomorrow = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date)) ?? date
            policyText = "{\"after\":\"\(Instant(milliseconds: Int64((tomorrow.timeIntervalSince1970 * 1000).rounded())).iso8601)\"}"
        }
        return "{\"entries\":[\(items.joined(separator: ","))],\"policy\":\(policyText),\"upstreamFetch\":\(fetched)}"
    }

    static func label(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }
}
