import ArgumentParser
import Foundation
import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// Talking to a live refreshd from the command line: one request, its reply printed as text
/// or JSON, and exit status 1 on an error reply or when refreshd is not running.
enum ControlOutput {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func printJSON<T: Encodable>(_ value: T) {
        if let data = try? encoder().encode(value) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func stderr(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    /// Sends `request` to the refreshd of `state` and returns its successful reply; on failure
    /// prints it (as `{"ok": false, "error": {...}}` with `json`) and exits 1.
    static func call(_ request: ControlRequest, state: String, json: Bool, command: String) throws -> ControlReply {
        let reply: ControlReply
        do {
            let client = try ControlClient.connect(stateDirectory: state)
            reply = try client.request(request)
        } catch {
            let code: String = if case .notRunning = error { "not-running" } else { "connection" }
            fail(ControlFailure(code: code, message: "\(error)"), json: json, command: command)
        }
        if !reply.ok {
            fail(reply.error ?? ControlFailure(code: "internal", message: "error reply without an error"),
                 json: json, command: command)
        }
        return reply
    }

    static func fail(_ failure: ControlFailure, json: Bool, command: String) -> Never {
        if json {
            printJSON(ControlReply.failure(id: nil, failure))
        } else {
            stderr("refreshd: \(command): \(failure.message) [\(failure.code)]")
        }
        Foundation.exit(1)
    }

    /// `+DURATION` from now, or an ISO 8601 date with an offset.
    static func parseWhen(_ text: String, now: Instant) -> Instant? {
        if text.hasPrefix("+"), let d = try? DurationParser.duration(String(text.dropFirst())) { return now + d }
        return ISO8601.parse(text)
    }

    static func describe(_ p: SchedulerSnapshot.Pending, now: Instant) -> String {
        let wait = p.earliest > now ? "in \(formatDuration(p.earliest.duration(since: now)))" : "due"
        let place = p.place.map { "  \($0.rawValue)" } ?? ""
        return "\(p.identifier)  \(p.kind.rawValue)  earliest \(p.earliest) (\(wait))  \(p.origin.rawValue)\(place)"
    }
}
