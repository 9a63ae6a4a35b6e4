import Glibc
import Logging
import Refreshd
import RefreshdCore

/// A swift-log handler printing one readable line per event: `TIME LEVEL message key=value`,
/// with control characters, terminal escapes and line separators in the text escaped
/// (`EchoText`), so a value from outside can neither split an event nor forge another.
///
/// Times are ISO 8601 UTC with milliseconds, so lines from refreshd and from job output sort and
/// compare across machines. Lines go to stderr, unbuffered, like a daemon under systemd expects.
package struct LineLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    private let label: String

    package init(label: String) { self.label = label }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: Logging.LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let suffix = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let level = event.level == .info ? "" : "\(event.level.rawValue.uppercased()) "
        // One line per event whatever a value held: the message and metadata are escaped here,
        // the one place every log line passes (a path, a reload reason, a job's output).
        let text = EchoText.escaped("\(event.message)\(suffix)", limit: nil)
        let line = "\(WallClock.now().iso8601) \(level)\(text)\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
