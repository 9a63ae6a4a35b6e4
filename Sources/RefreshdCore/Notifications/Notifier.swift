/// Where a job's failure or recovery notification goes (`on-failure:` / `on-recovery:` in a job
/// file): a command run like a job's (new session, killed at `timeout`), or a webhook POSTed to
/// with a JSON body. Carried inside each held notification, so one written before a reload or a
/// restart is delivered where it was meant to go.
package struct Notifier: Sendable, Hashable, Codable {
    package enum Target: Sendable, Hashable, Codable {
        /// An argument vector (argv[0] resolved like a job's command), run in `workingDirectory`.
        case command(argv: [String], workingDirectory: String?)
        /// An `http://` or `https://` URL.
        case webhook(url: String)
    }

    package var target: Target
    /// How long one delivery attempt may take (the command is killed, the request cancelled).
    package var timeoutMilliseconds: Int64

    /// `timeout:` when a job file gives none.
    package static let defaultTimeout: Duration = .seconds(10)

    package init(_ target: Target, timeout: Duration = Notifier.defaultTimeout) {
        self.target = target
        self.timeoutMilliseconds = timeout.wholeMilliseconds
    }

    package var timeout: Duration { .milliseconds(timeoutMilliseconds) }

    /// `webhook https://example.net/hook` or `command /usr/bin/notify-send`, for log lines.
    package var summary: String {
        switch target {
        case let .command(argv, _): "command \(argv.first ?? "?")"
        case let .webhook(url): "webhook \(url)"
        }
    }
}

/// A job's notifiers: none, either or both.
package struct JobNotifiers: Sendable, Hashable {
    /// Told once per run that ended `failure`, `expired` or `crashed`.
    package var onFailure: Notifier?
    /// Told at the first success after failures that were notified.
    package var onRecovery: Notifier?

    package init(onFailure: Notifier? = nil, onRecovery: Notifier? = nil) {
        self.onFailure = onFailure
        self.onRecovery = onRecovery
    }

    package var isEmpty: Bool { onFailure == nil && onRecovery == nil }
}
