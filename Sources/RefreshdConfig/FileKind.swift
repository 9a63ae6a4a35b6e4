/// What kind of YAML file is being read, for the words of messages that are the same for job
/// files and scenario files ("expected a job file of at most 1 MiB").
struct FileKind: Sendable, Hashable {
    /// `job file`, `scenario file`.
    var noun: String
    /// What one document of it holds: `one job`, `one scenario`.
    var holds: String
    /// `job files`, `scenario files`: for "... read every value as text".
    var plural: String

    static let job = FileKind(noun: "job file", holds: "one job", plural: "job files")
    static let scenario = FileKind(noun: "scenario file", holds: "one scenario", plural: "scenario files")
}
