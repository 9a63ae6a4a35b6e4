/// What the store keeps of a run's output (issue 33): the last lines it printed on stdout and
/// stderr, as they were logged (through the output rate limit), and its accepted results lines.
///
/// The runtime's machine keeps the tail while the run runs (`RuntimeMachine.outputLines`) and
/// commits it with the run's end (`StateChange.runOutput`, in the end's transaction), so a failed
/// run's output survives other runs and restarts; it goes with the run's row when the retention
/// prunes it. Bounded per run: the last `lines` lines (`refreshd run --keep-output`, default
/// `defaultLines`, at most `maxLines`) and at most `maxBytes` bytes of them; results lines (those
/// applied live while it ran, then those accepted at its end) as the results channel caps them:
/// the last `RunResults.maxLines`, each at most `RunResults.maxLineBytes`.
/// A run killed with refreshd (kill -9) keeps nothing: the tail was in memory.
package struct RunOutput: Sendable, Hashable {
    /// Lines kept per run by default: a failing job's last screenful or several, not its log.
    package static let defaultLines = 200
    /// The most lines a setting may keep per run.
    package static let maxLines = 2000
    /// The most bytes of lines kept per run, whatever the setting: 64 KiB.
    package static let maxBytes = 64 * 1024

    /// The last lines printed, oldest first.
    package var lines: [String]
    /// How many lines were printed before the kept ones (and not kept).
    package var earlier: Int
    /// The accepted results lines (compact JSON), in the order written.
    package var results: [String]

    package init(lines: [String] = [], earlier: Int = 0, results: [String] = []) {
        self.lines = lines
        self.earlier = earlier
        self.results = results
    }

    /// Nothing kept.
    package static let none = RunOutput()

    package var isEmpty: Bool { lines.isEmpty && results.isEmpty && earlier == 0 }

    /// The tail of a running run: lines appended, the oldest dropped past `limit` lines or
    /// `maxBytes` bytes.
    package struct Tail: Sendable, Hashable {
        package private(set) var output = RunOutput()
        private var bytes = 0

        package init() {}

        /// A results line applied while the run ran (a live activity update, taken off the
        /// channel): kept as the lines accepted at its end are, the last `RunResults.maxLines`.
        package mutating func appendLive(_ line: String) {
            output.results.append(line)
            if output.results.count > RunResults.maxLines { output.results.removeFirst() }
        }

        package mutating func append(_ lines: [String], limit: Int) {
            for line in lines {
                // A line holds no newline (the stores join lines with them): a built-in
                // action's log line might.
                let kept = line.utf8.contains(10) ? line.replacingNewlines() : line
                output.lines.append(kept)
                bytes += kept.utf8.count
            }
            var drop = max(0, output.lines.count - limit)
            var left = bytes
            for line in output.lines.prefix(drop) { left -= line.utf8.count }
            while left > RunOutput.maxBytes, drop < output.lines.count {
                left -= output.lines[drop].utf8.count
                drop += 1
            }
            guard drop > 0 else { return }
            output.lines.removeFirst(drop)
            output.earlier += drop
            bytes = left
        }
    }

    /// Lines as one text, each ended by a newline (nil for none): how the stores keep them, as
    /// no line holds a newline.
    package static func joined(_ lines: [String]) -> String? {
        lines.isEmpty ? nil : lines.map { $0 + "\n" }.joined()
    }

    /// The lines of a `joined` text.
    package static func split(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(decoding: utf8.map { $0 == 10 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
