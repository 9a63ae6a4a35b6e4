import RefreshdConfig
import RefreshdCore

/// The lines a modelled activity writes while its run goes on (the model itself is config data,
/// `ActivityModel`).
extension ActivityModel {
    /// The live lines of the `run`-th run starting at `start` and lasting `duration`, at their
    /// offsets from the start; updates after `silentAfter` (a job that stops updating) and the
    /// end line are left out when it is set.
    package func lines(run: Int, start: Instant, duration: Duration, silentAfter: Duration? = nil) -> [(offset: Duration, line: String)] {
        let id = Self.substitutingRun(self.id, run)
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

    /// `template` with every `{run}` (left to right, not overlapping) replaced by the run's
    /// number: a byte scan, where Foundation's `replacingOccurrences` was 1.4% of a simulated
    /// year (it runs at every modelled run of an activity).
    static func substitutingRun(_ template: String, _ run: Int) -> String {
        let pattern: [UInt8] = Array("{run}".utf8)
        guard template.utf8.contains(pattern[0]) else { return template }
        let bytes = Array(template.utf8)
        let number = Array(String(run).utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + number.count)
        var i = 0
        while i < bytes.count {
            if i + pattern.count <= bytes.count, bytes[i..<(i + pattern.count)].elementsEqual(pattern) {
                result += number
                i += pattern.count
            } else {
                result.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
