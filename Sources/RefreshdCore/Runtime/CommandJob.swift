/// An external command: argv (no shell), extra environment and working directory.
public struct CommandJob: Sendable, Hashable {
    public var argv: [String]
    public var environment: [String: String]
    public var workingDirectory: String?

    public init(argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil) {
        self.argv = argv
        self.environment = environment
        self.workingDirectory = workingDirectory
    }
}
