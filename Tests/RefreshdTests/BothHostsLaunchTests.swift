import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Issue 22: which launches can start is the machine's rule (`RuntimeMachine.launching`), not a
/// host's: a command with nothing to run and an identifier with no handler end as failed starts,
/// with the same log line, on the real loop and in virtual time.
extension BothHostsProcessRulesTests {
    @Test(arguments: HostKind.allCases)
    func aCommandWithNothingToRunIsAFailedStartOnBothHosts(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        try h.start()
        let seen = Seen()
        h.runtime.observe { seen.add($0) }
        h.runtime.register(TaskDefinition(identifier: "t.empty"), handler: .command(CommandJob(argv: [])))
        try h.runtime.submit(TaskRequest(identifier: "t.empty"))
        #expect(h.wait(.seconds(5)) { h.outcomes("t.empty") == [.failure] })
        let finished = seen.of(.finished, "t.empty").map(\.message)
        #expect(finished.count == 1 && finished[0].hasPrefix("finished t.empty run 1: failure (could not start: no command to run) after "),
                "\(finished)")
        // Never handed to a host: no process, so no leftover sweep and no results.
        #expect(seen.of(.reaped, "t.empty").isEmpty)
        #expect(seen.of(.results, "t.empty").isEmpty)
    }
}
