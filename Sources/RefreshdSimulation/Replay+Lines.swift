import Foundation
import RefreshdCore

extension Replay {
    /// A replayed run's recorded results lines (`run --keep-output`) as the modelled process
    /// writes them again: the live ones (activity events, explicit reloads, applied as they are
    /// written) at their own `timestamp` into the run, clamped to it (one without a timestamp
    /// with the line before it, or at the start); the others at the end, where the daemon
    /// applied them. The record keeps the lines, not when each was written: a live line
    /// without a timestamp is placed early.
    ///
    /// ```swift
    /// Replay.lines([#"{"activity":"start","id":"pack","type":"T","content":{}}"#, "{\"instances\":[]}"],
    ///              start: t, duration: .seconds(5))
    /// // timed: [(0 s, the start line)], atEnd: ["{\"instances\":[]}"]
    /// ```
    static func lines(_ recorded: [String], start: Instant, duration: Duration) -> (timed: [SimulatedHost.TimedLine], atEnd: [String]) {
        var timed: [SimulatedHost.TimedLine] = []
        var atEnd: [String] = []
        var offset = Duration.zero
        for line in recorded {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  ResultLine.parse(object: object, owner: "", namespace: "", now: start).isLive else {
                atEnd.append(line)
                continue
            }
            if let text = object["timestamp"] as? String, let at = ISO8601.parse(text) {
                offset = min(duration, max(.zero, at.duration(since: start)))
            }
            timed.append(SimulatedHost.TimedLine(offset: offset, line: line))
        }
        return (timed, atEnd)
    }

    /// The `timestamp`s of a run's kept results lines within its span: instants the store knew
    /// of, where the replay places a kill -9 (the lines of a run in flight are saved as they are
    /// applied).
    static func lineTimes(_ run: RunRecord) -> [Instant] {
        run.output.results.compactMap { line in
            guard line.contains("\"timestamp\""),
                  let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  let text = object["timestamp"] as? String, let at = ISO8601.parse(text),
                  at >= run.started, run.ended.map({ at <= $0 }) ?? true else { return nil }
            return at
        }
    }
}
