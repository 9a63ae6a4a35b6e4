import Foundation

/// The results channel: how a command hands structured results (a timeline, an activity update)
/// back to refreshd, apart from its human-readable output.
///
/// A command writes JSON objects, one per line, to file descriptor 3 (`REFRESH_RESULT_FD`);
/// stdout and stderr stay free for people. The host reads the descriptor while the command runs,
/// keeping at most `maxLines` lines of at most `maxLineBytes` bytes; the runtime accepts each
/// line that is one JSON object and refuses the rest with a reason in the log. Accepted results
/// reach the machines with the run's end (`runFinished(results:)`).
///
/// ```sh
/// echo '{"entries": [{"date": "2026-11-22T06:00:00Z", "asset": "dawn"}], "policy": "atEnd"}' >&3
/// ```
package enum RunResults {
    /// The descriptor a command writes results to.
    package static let descriptor: Int32 = 3
    /// Lines kept per run; more are dropped by the host and reported.
    package static let maxLines = 64
    /// Bytes per line; a longer line is refused whole.
    package static let maxLineBytes = 16 * 1024

    /// What a host appends when a run wrote more than it keeps (never valid JSON).
    package static let truncatedMarker = "\u{0}truncated"

    /// Splits accepted results (one compact JSON object each) from refused lines (with the reason).
    package static func check(_ lines: [String]) -> (accepted: [String], problems: [String]) {
        var accepted: [String] = []
        var problems: [String] = []
        for (index, line) in lines.enumerated() {
            let number = index + 1
            if index >= maxLines {
                problems.append("line \(number) and after: more than \(maxLines) results")
                break
            }
            // A line `StrictJSON` reads is one JSON object to Foundation too: no decoding needed.
            if line.utf8.count <= maxLineBytes, StrictJSON.object(line) != nil {
                accepted.append(line)
                continue
            }
            switch verdict(line, number: number) {
            case .blank: continue
            case let .refused(problem): problems.append(problem)
            case let .accepted(text, _): accepted.append(text)
            }
        }
        return (accepted, problems)
    }

    /// What `check` decides about one line, with the JSON object it decoded so that a caller
    /// reading the line now (`RefreshRuntime.runResultLine`) does not decode it again.
    package enum LineVerdict {
        case blank
        case accepted(String, [String: Any])
        case refused(String)
    }

    /// The verdict on the line numbered `number` (for the refusal's message).
    package static func verdict(_ line: String, number: Int) -> LineVerdict {
        if line == truncatedMarker {
            return .refused("more than \(maxLines * (maxLineBytes + 1)) bytes of results; the rest was dropped")
        }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return .blank }
        if trimmed.utf8.count > maxLineBytes {
            return .refused("line \(number): \(trimmed.utf8.count) bytes, more than \(maxLineBytes)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
            return .refused("line \(number): expected one JSON object per line, found \(preview(trimmed))")
        }
        return .accepted(trimmed, object)
    }

    /// The start of a refused line, escaped, for a one-line message.
    package static func preview(_ text: String) -> String {
        EchoText.quoted(text, limit: 40)
    }
}
