/// An error reply's body: a stable code for programs and a sentence for people that names what
/// was wrong and what was expected.
///
/// Codes: `bad-json` (the line is not a JSON object), `bad-request` (a field is missing or of the
/// wrong type), `unknown-command`, `unsupported` (a reserved command this refreshd does not carry
/// out yet), `unsupported-version`, `line-too-long` (the connection is closed after it),
/// `permission-denied` (peer uid; closed after it), the core's refusals (`not-declared`,
/// `not-pending`, `run-in-flight`, `at-capacity`, `not-running`, `already-expiring`, `stopping`),
/// the scheduler's (`too-many-pending`, `not-permitted`, `unavailable`, `not-saved`) and
/// `internal` (the store could not be read).
public struct ControlFailure: Codable, Sendable, Equatable, Error, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
