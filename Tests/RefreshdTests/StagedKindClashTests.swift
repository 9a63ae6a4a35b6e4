import Foundation
import Testing
@testable import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// Issue 23: two instances of one staging template whose keys make the same reload kind
/// (`a@b` and `a-at-b`: `wallpaper-a-at-b`) would reload one widget; the second add is refused
/// at once, naming both instances and `stage-playlist.widget`, on both hosts (the rule is the
/// composition's, `Machines+StagedKinds`), and nothing of it is kept.
@Suite(.serialized) struct StagedKindClashTests {
    static func stagingTemplate() -> JobSpec {
        var options = StageOptions(library: "/nonexistent/libraries/{user}", switchTimes: [ClockTime("06:00")].compactMap { $0 },
                                   zone: "UTC", assetsPerDay: 1, families: [.standard(.systemSmall)],
                                   widgetKind: "wallpaper-{user}")
        options.folder = "wallpaper-{user}"
        let definition = TaskDefinition(identifier: "t.stage", kind: .processing, namespace: "t.stage",
                                        allowance: .seconds(5), grace: .seconds(1))
        return JobSpec(definition: definition, command: CommandJob(argv: []), action: .stagePlaylist(options),
                       template: TemplateSpec(parameters: ["user"], pathParameters: ["user"], stagedKind: "wallpaper-{user}"))
    }

    @Test(arguments: HostKind.allCases)
    func aSecondInstanceMakingTheSameReloadKindIsRefused(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.spec(Self.stagingTemplate(), Work())
        try h.start()
        try h.runtime.addInstance(template: "t.stage", key: "a@b")
        let message = "t.stage[a-at-b]: stage-playlist.widget \"wallpaper-{user}\" makes \"wallpaper-a-at-b\", the widget "
            + "instance t.stage[a@b] already reloads (each '@' of a value is written \"-at-\"); two instances cannot reload "
            + "one widget: expected values that make a kind of their own"
        do {
            try h.runtime.addInstance(template: "t.stage", key: "a-at-b")
            Issue.record("the second instance making wallpaper-a-at-b was added")
        } catch {
            #expect(error.description == message)
        }
        // The batch add (an instances: file, a sync job's lines) refuses it the same way.
        let refused = h.runtime.addInstances([InstanceRecord(template: "t.stage", key: "a-at-b", values: [:])])
        #expect(refused.map(\.error.description) == [message])
        // The owner added again is kept, not refused; another key is its own kind.
        try h.runtime.addInstance(template: "t.stage", key: "a@b")
        try h.runtime.addInstance(template: "t.stage", key: "carol")
        #expect(h.runtime.instances(of: "t.stage")?.map(\.key).sorted() == ["a@b", "carol"])
        // Once the owner is removed the kind is free.
        try h.runtime.removeInstance(template: "t.stage", key: "a@b")
        try h.runtime.addInstance(template: "t.stage", key: "a-at-b")
        #expect(h.runtime.instances(of: "t.stage")?.map(\.key).sorted() == ["a-at-b", "carol"])
        // After a restart the restored instances hold their kinds (the index is rebuilt from them).
        try h.restart(downtime: .seconds(1))
        do {
            try h.runtime.addInstance(template: "t.stage", key: "a@b")
            Issue.record("after the restart, a@b took a-at-b's kind")
        } catch {
            #expect(error.description.contains("the widget instance t.stage[a-at-b] already reloads"), "\(error)")
        }
    }
}
