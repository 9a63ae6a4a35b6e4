/// The reply to `hello`: who answers, so a client can tell a live refreshd from a stale socket.
package struct ControlHello: Codable, Sendable, Equatable {
    /// The protocol version the server speaks.
    package var protocolVersion: Int
    package var pid: Int32
    package var stateDirectory: String
    package var commands: [String]
    package var maxConcurrentRuns: Int

    package init(protocolVersion: Int, pid: Int32, stateDirectory: String, commands: [String], maxConcurrentRuns: Int) {
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.stateDirectory = stateDirectory
        self.commands = commands
        self.maxConcurrentRuns = maxConcurrentRuns
    }
}
