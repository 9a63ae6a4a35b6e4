import Foundation
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// What an operator's commands become over the real socket: the rules are the runtime's
/// (`TaskRequest.forJob`, `ActivityRequest.operatorOwner`), the socket only parses and replies.
@Suite(.serialized) struct OperatorCommandTests {
    typealias Served = ControlServerTests.Served

    /// `submit` makes the job's own request: a job that needs the network and power keeps
    /// needing them when an operator asks for it.
    @Test func anOperatorsSubmitIsTheJobsOwnRequest() throws {
        let served = try Served(register: { scheduler in
            scheduler.register(TaskDefinition(identifier: "test.net", kind: .processing, requiresExternalPower: true,
                                              requiresNetworkConnectivity: true),
                               command: CommandJob(argv: ["/bin/true"]))
        })
        defer { served.close() }
        let client = try served.client()
        let hour = Instant(secondsSinceEpoch: Date().timeIntervalSince1970 + 3600)
        let submit = try client.request(ControlRequest(.submit, identifier: "test.net", earliest: hour))
        #expect(submit.ok, "\(submit.error?.description ?? "")")
        let pending = try #require(submit.pending?.first)
        #expect(pending.requiresNetworkConnectivity && pending.requiresExternalPower)
        #expect(pending.earliest == hour)
        let unknown = try client.request(ControlRequest(.submit, identifier: "test.nope"))
        #expect(unknown.error?.code == "not-declared")
    }

    /// An activity started over the socket is the operator's: its owner says so (snapshot,
    /// log), and no job's end ends it.
    @Test func anOperatorsActivityHasTheOperatorAsOwner() throws {
        let served = try Served()
        defer { served.close() }
        let client = try served.client()
        let start = try client.request(ControlRequest(.activity, activity: #"{"activity":"start","id":"pack","type":"Download","content":{"progress":0.1}}"#))
        #expect(start.ok, "\(start.error?.description ?? "")")
        #expect(start.activities?.activities.map(\.owner) == [ActivityRequest.operatorOwner])
        #expect(ActivityRequest.operatorOwner == "operator")
    }
}
