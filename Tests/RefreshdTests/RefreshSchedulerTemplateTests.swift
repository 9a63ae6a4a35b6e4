import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// The embedding API's templates (issue 23): register a template, add instances, each runs with
/// its own identifier; removed ones do not run again.
@Suite(.serialized) struct RefreshSchedulerTemplateTests {
    @Test func instancesOfAnInProcessTemplateRunUnderTheirOwnIdentifiers() throws {
        let seen = LineSink()
        let h = try LoopHarness { s in
            s.registerTemplate(TaskDefinition(identifier: "t.feed", namespace: "t.feed"), parameters: ["user"]) { task in
                seen.append(InstanceName.split(task.identifier)?.key ?? "?")
                task.setTaskCompleted(success: true)
            }
        }
        defer { h.removeDirectory() }
        h.start()
        for key in ["alice", "bob"] { try h.scheduler.addInstance(template: "t.feed", key: key) }
        #expect(h.wait { h.outcomes()["t.feed[alice]"] == [.success] && h.outcomes()["t.feed[bob]"] == [.success] })
        #expect(h.scheduler.instances(of: "t.feed")?.map(\.key) == ["alice", "bob"])
        try h.scheduler.removeInstance(template: "t.feed", key: "bob")
        #expect(h.scheduler.instances(of: "t.feed")?.map(\.key) == ["alice"])
        #expect(throws: InstanceError.unknownTemplate("t.none")) { try h.scheduler.addInstance(template: "t.none", key: "x") }
        #expect(h.stop())
        #expect(seen.contains("alice") && seen.contains("bob"))
    }
}
