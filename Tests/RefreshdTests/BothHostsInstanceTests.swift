import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Instances of a template (issue 23) on both hosts: each instance runs its template's command
/// with its own values, keeps its own retry backoff across a restart, and a removed one's
/// request is gone for good.
@Suite(.serialized) struct BothHostsInstanceTests {
    static let template = "t.feed.refresh"

    /// A template whose command fails for the key `bad` (a retry with backoff follows) and
    /// writes its argument to a file named by it under libuv.
    static func spec(_ directory: String) -> JobSpec {
        let definition = TaskDefinition(identifier: template, namespace: template, allowance: .seconds(10),
                                        resubmit: .after(.seconds(3600)), retry: RetryPolicy(initial: .seconds(600)))
        let script = "printf '%s' \"$1\" > \"$2/out-$1\"; test \"$1\" != bad"
        return JobSpec(definition: definition,
                       command: CommandJob(argv: ["/bin/sh", "-c", script, "sh", "{user}", directory]),
                       template: TemplateSpec(parameters: ["user"]))
    }

    @Test(arguments: HostKind.allCases)
    func instancesRunTheirValuesKeepBackoffAcrossARestartAndRemovalIsForGood(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let outputs = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: outputs) }
        let spec = Self.spec(outputs)
        switch h {
        case let libuv as LibuvHarness: libuv.specs.append(spec)
        case let simulated as SimulatedHarness:
            simulated.specs.append(spec)
            simulated.behaviours.set("\(Self.template)[bad]", Work(exit: 1))
        default: break
        }
        try h.start()
        for key in ["alice", "bob", "bad"] {
            try h.runtime.addInstance(template: Self.template, key: key)
        }
        #expect(h.wait(.seconds(10)) { h.runs().filter { $0.outcome != nil }.count == 3 })
        #expect(h.outcomes("\(Self.template)[alice]") == [.success])
        #expect(h.outcomes("\(Self.template)[bad]") == [.failure])
        if kind == .libuv {
            // Each run's argv had its own value, as one element.
            #expect(try String(contentsOfFile: outputs + "/out-alice", encoding: .utf8) == "alice")
            #expect(try String(contentsOfFile: outputs + "/out-bob", encoding: .utf8) == "bob")
        }
        let retry = try #require(h.runtime.pending("\(Self.template)[bad]"))
        #expect(retry.origin == .retry)
        let alice = try #require(h.runtime.pending("\(Self.template)[alice]"))
        try h.runtime.removeInstance(template: Self.template, key: "bob")
        #expect(h.runtime.pending("\(Self.template)[bob]") == nil)

        try h.restart(downtime: .milliseconds(100))
        #expect(h.runtime.instances(of: Self.template)?.map(\.key) == ["alice", "bad"])
        // The retry kept its backoff (its earliest, its origin), alice her next request.
        #expect(h.runtime.pending("\(Self.template)[bad]") == retry)
        #expect(h.runtime.pending("\(Self.template)[alice]") == alice)
        #expect(h.runtime.pending("\(Self.template)[bob]") == nil)
        #expect(throws: InstanceError.unknownInstance(template: Self.template, key: "bob")) {
            try h.runtime.removeInstance(template: Self.template, key: "bob")
        }
    }

    /// A sync job's results line sets the template's instances (at the end of its successful
    /// run, in its run end's transaction); a failed sync run's lines are ignored; `ctl`'s
    /// removal (the runtime's) takes one away.
    @Test(arguments: HostKind.allCases)
    func aSyncJobsResultsAddAndRemoveInstances(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let template = TaskDefinition(identifier: "t.feed", namespace: "t.feed", resubmit: .after(.seconds(3600)))
        let spec = JobSpec(definition: template, command: CommandJob(argv: ["/bin/true", "{user}"]),
                           firstRequest: .after(.seconds(3600)), template: TemplateSpec(parameters: ["user"], firstRequest: .after(.seconds(3600))))
        h.spec(spec, Work())
        h.job(TaskDefinition(identifier: "t.sync", kind: .processing),
              Work(results: [#"{"instances":"t.feed","set":["a","b"]}"#, #"{"instances":"t.feed","set":["c"],"remove":["zz"]}"#]))
        h.job(TaskDefinition(identifier: "t.badsync", kind: .processing),
              Work(exit: 1, results: [#"{"instances":"t.feed","set":[]}"#]))
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.sync", kind: .processing))
        #expect(h.wait(.seconds(10)) { h.outcomes("t.sync") == [.success] })
        #expect(h.runtime.instances(of: "t.feed")?.map(\.key) == ["a", "b", "c"])
        #expect(h.runtime.pendingRequests().filter { $0.identifier.hasPrefix("t.feed[") }.count == 3)
        // A failed sync run's set (here: empty, which would remove every instance) is ignored.
        try h.runtime.submit(TaskRequest(identifier: "t.badsync", kind: .processing))
        #expect(h.wait(.seconds(10)) { h.outcomes("t.badsync") == [.failure] })
        #expect(h.runtime.instances(of: "t.feed")?.count == 3)
        try h.runtime.removeInstance(template: "t.feed", key: "b")
        #expect(h.runtime.instances(of: "t.feed")?.map(\.key) == ["a", "c"])
        #expect(h.runtime.pending("t.feed[b]") == nil)
    }
}
