/// The reply to `hello`: who answers, so a client can tell a live refreshd from a stale socket.
public struct ControlHello: Codable, Sendable, Equatable {
    /// The protocol version the server speaks.
    public var protocolVersion: Int
    public var pid: Int32
    public var stateDirectory: String
    public var commands: [String]
    public var maxConcurrentRuns: Int

    public init(protocolVersion: Int, pid: Int32, stateDirectory: String, commands: [String], maxConcurrentRuns: Int) {
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.stateDirectory = stateDirectory
        self.commands = commands
        self.maxConcurrentRuns = maxConcurrentRuns
    }
}
