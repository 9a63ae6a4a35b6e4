import RefreshdCore

/// The core's escaping, under the same name for every file of this module (imported or not).
typealias EchoText = RefreshdCore.EchoText

/// Job-file messages echo values cut to `JobFileLimits.maximumEchoedScalars`; the escaping
/// itself is the core's `EchoText`, shared with the log.
extension RefreshdCore.EchoText {
    /// `"text"`, escaped and cut to `JobFileLimits.maximumEchoedScalars` scalars.
    static func quoted(_ text: String) -> String {
        quoted(text, limit: JobFileLimits.maximumEchoedScalars)
    }

    /// The text with control characters escaped, cut after `JobFileLimits.maximumEchoedScalars`.
    static func escaped(_ text: String) -> String {
        escaped(text, limit: JobFileLimits.maximumEchoedScalars)
    }
}
