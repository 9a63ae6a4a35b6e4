import RefreshdConfig
import RefreshdCore

/// The lines a modelled activity writes while its run goes on (the model itself is config data,
/// `ActivityModel`).
extension ActivityModel {
    /// The live lines of the `run`-th run starting at `start` and lasting `duration`, at their
    /// offsets from the start; updates after `silentAfter` (a job that stops updating) and the
    /// end line are left out when it is set.
    public func lines(run: Int, start: Instant, duration: Duration, silentAfter: Duration? = nil) -> [(offset: Duration, line: String)] {
        let id = self.id.replacingOccurrences(of: "{run}", with: String(run))
        func progressAt(_ offset: Duration) -> String {
            let total = Double(max(1, duration.wholeMilliseconds))
            let fraction = min(1, max(0, Double(offset.wholeMilliseconds) / total))
            let value = progress.lowerBound + (progress.upperBound - progress.lowerBound) * fraction
            return String((value * 1000).rounded() / 1000)
        }
        func stale(_ offset: Duration) -> String {
            staleAfter.map { ",\"staleDate\":\"\((start + offset + $0).iso8601)\"" } ?? ""
        }
        var result: [(Duration, String)] = []
        result.append((.zero, "{\"activity\":\"start\",\"id\":\"\(id)\",\"type\":\"\(type)\","
            + "\"content\":{\"progress\":\(progressAt(.zero))}\(stale(.zero))}"))
        if let step = updates, step > .zero {
            var offset = step
            while offset < duration {
                if let silent = silentAfter, offset > silent { break }
                result.append((offset, "{\"activity\":\"update\",\"id\":\"\(id)\",\"content\":{\"progress\":\(progressAt(offset))}"
                    + "\(stale(offset)),\"timestamp\":\"\((start + offset).iso8601)\",\"priority\":\"\(highPriority ? "high" : "low")\"}"))
                offset = offset + step
            }
        }
        if silentAfter == nil {
            let dismissal: String? = switch end {
            case .default: "\"default\""
            case .immediate: "\"immediate\""
            case let .after(span): "{\"after\":\"\((start + duration + span).iso8601)\"}"
            case .none: nil
            }
            if let dismissal {
                result.append((duration, "{\"activity\":\"end\",\"id\":\"\(id)\",\"content\":{\"progress\":\(progressAt(duration))},"
                    + "\"dismissal\":\(dismissal),\"timestamp\":\"\((start + duration).iso8601)\"}"))
            }
        }
        return result
    }
}
