import RefreshdCore

/// An error reply's body: a stable code for programs and a sentence for people that names what
/// was wrong and what was expected.
///
/// Codes: `bad-json` (the line is not a JSON object), `bad-request` (a field is missing, of the
/// wrong type or out of its range), `unknown-command`, `unsupported-version`, `line-too-long` (the connection is closed after it),
/// `permission-denied` (peer uid; closed after it), the core's refusals (`not-declared`,
/// `not-pending`, `run-in-flight`, `at-capacity`, `not-running`, `already-expiring`, `stopping`),
/// the scheduler's (`too-many-pending`, `not-permitted`, `unavailable`, `not-saved`) and
/// `unknown-kind` (a reload of a widget kind no job declares), the activity machine's refusals
/// (`activities-disabled`, `payload-too-large`, `too-many-activities`, `duplicate-id`,
/// `unknown-activity`, `not-allowed`, `invalid-field`), the socket's own limits
/// (`too-many-clients`, `no-descriptors`, `too-many-subscribers`; the first two close the
/// connection), `not-saved` (a request whose group could not be committed) and `internal` (the
/// store could not be read).
package struct ControlFailure: Codable, Sendable, Equatable, Error, CustomStringConvertible {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }

    /// An activity refusal as an error reply: its code and the machine's sentence.
    package init(_ error: ActivityError) {
        let code = switch error {
        case .disabled: "activities-disabled"
        case .payloadTooLarge: "payload-too-large"
        case .tooManyActivities, .tooManyInTotal, .tooManyNamespaces: "too-many-activities"
        case .duplicateID: "duplicate-id"
        case .unknownActivity: "unknown-activity"
        case .notAllowed: "not-allowed"
        case .invalidField: "invalid-field"
        case .restoreNotFirst: "internal"
        case .notOwned: "not-owned"
        }
        self.init(code: code, message: error.description)
    }
}
