import RefreshdConfig

/// What `refreshd check --json` prints, valid or not:
///
/// ```json
/// {"directory": "Jobs", "valid": false, "jobs": [],
///  "errors": [{"file": "Jobs/a.yaml", "line": 3, "column": 12, "field": "allowance",
///              "message": "allowance: expected a duration like 30s, 10m or 1h30m, found \"soon\""}]}
/// ```
///
/// `valid` is true exactly when `errors` is empty (and the exit status is 0). An invalid folder
/// is refused as a whole, as `refreshd run` refuses it, so `jobs` is empty whenever `valid` is
/// false: no job of an invalid folder would run.
struct CheckReport: Encodable {
    /// The job folder as given.
    var directory: String
    var valid: Bool
    var jobs: [Job]
    var errors: [Problem]

    init(directory: String, jobs: [Job], errors: [Problem]) {
        self.directory = directory
        self.valid = errors.isEmpty
        self.jobs = jobs
        self.errors = errors
    }

    /// A valid job: every setting, defaults included. Optional keys are left out when they do
    /// not apply.
    struct Job: Encodable {
        var identifier: String
        var kind: String
        var file: String
        /// The argument vector as run (the program resolved); empty for a built-in action or
        /// `provider: playlist`.
        var command: [String]
        /// Extra environment variables of the command.
        var environment: [String: String]
        /// The namespace its pending limits count in (`namespace:`, or derived from the identifier).
        var namespace: String
        /// `external-power`, `network`; empty when it needs nothing.
        var requires: [String]
        var earliest: String
        var allowance: String
        /// Between the expiration (SIGTERM) and SIGKILL.
        var grace: String
        var missed: String
        var jitter: String
        var fixedJitter: Bool
        var accuracy: String
        /// Only with `missed: all`.
        var catchUp: String?
        /// `after 6h` or `calendar *-*-* 04:00:00`; absent when the job runs once per request.
        var resubmit: String?
        /// The next three elapses (ISO 8601 UTC) of a calendar job.
        var nextElapses: [String]?
        /// Retries after a failed run; absent without `retry:`.
        var retry: Retry?
        /// A built-in action run instead of a command (`action:`, or a widget's `provider: playlist`).
        var action: Action?
        /// A timeline job's widget, in words.
        var widget: String?
        /// Whether the job has a `simulate:` block (without one, it is a quick success in simulation).
        var simulate: Bool
        /// What each run may use (`limits:`); absent without one.
        var limits: Limits?
        /// Who each run runs as (`user:` and `group:`); absent without `user:`.
        var runAs: RunAsReport?
    }

    /// `user:` and `group:` as written and what they resolved to on this machine.
    struct RunAsReport: Encodable {
        var user: String
        var group: String?
        var uid: UInt32?
        var gid: UInt32?
        /// Every group of a run, the primary one first.
        var groups: [UInt32]?
        var home: String?
    }

    /// `limits:` as read: memory in bytes, cpu in percent of one CPU; absent keys are unset.
    struct Limits: Encodable {
        var memory: Int64?
        var cpu: Int?
        var tasks: Int?
        var nice: Int?
        var ioWeight: Int?
    }

    /// `retry: {backoff, initial, max, limit}` with every default filled in.
    struct Retry: Encodable {
        var backoff: String
        var initial: String
        var max: String
        var limit: Int
    }

    /// A built-in action: its name and its options as their canonical `key=value` text.
    struct Action: Encodable {
        var name: String
        var options: [String: String]
    }

    /// One error, located as in the text output (`file:line:column: message`).
    struct Problem: Encodable {
        var file: String
        var line: Int
        var column: Int
        /// The job setting the error is about, when the message starts with one (`allowance`,
        /// `retry.max`, `resubmit.timezone`); null for errors that are not about one setting's
        /// value: YAML syntax, unknown or missing keys, whole-file and whole-folder problems.
        var field: String?
        /// The message without the location, as in the text output.
        var message: String

        init(_ error: ConfigError) {
            file = error.file
            line = error.line
            column = error.column
            field = Self.field(of: error.message)
            message = error.message
        }

        /// `allowance` for `allowance: expected ...`, `retry.max` for `retry.max: ...`; nil when
        /// the message does not start with a setting name and a colon.
        static func field(of message: String) -> String? {
            guard let colon = message.firstIndex(of: ":") else { return nil }
            let name = message[..<colon]
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            let isName = !labels.isEmpty && labels.allSatisfy { label in
                guard let first = label.first, first.isASCII, first.isLetter else { return false }
                return label.allSatisfy { $0.isASCII && ($0.isLowercase || $0 == "-") }
            }
            return isName ? String(name) : nil
        }

        enum CodingKeys: String, CodingKey { case file, line, column, field, message }

        /// Written by hand so that a missing `field` is `null`, not left out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(line, forKey: .line)
            try container.encode(column, forKey: .column)
            try container.encode(field, forKey: .field)
            try container.encode(message, forKey: .message)
        }
    }
}
