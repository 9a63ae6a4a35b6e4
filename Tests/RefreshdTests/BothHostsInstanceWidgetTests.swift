import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Per-instance widgets of a timeline template (issue 23) on both hosts: adding an instance
/// declares its widget (its own kind, timeline, budget and publication), removing it withdraws
/// them (its file removed), a restart restores them with their budget.
@Suite(.serialized) struct BothHostsInstanceWidgetTests {
    static let template = "t.feed.widget"

    static func spec() -> JobSpec {
        let definition = TaskDefinition(identifier: template, kind: .processing, namespace: template, allowance: .seconds(10))
        let widget = WidgetSpec(kind: "feed.{user}", families: ["systemSmall"], budget: 4, minReloadInterval: .zero)
        return JobSpec(definition: definition, command: CommandJob(argv: ["/bin/true"]),
                       template: TemplateSpec(parameters: ["user"], widget: widget))
    }

    /// One entry now and no further reload (`never`): one counted reload per widget.
    static let provider = Work(results: [#"{"entries":[{"date":"{+0}","content":{"asset":"a"}}],"policy":"never"}"#])

    @Test(arguments: HostKind.allCases)
    func addingAndRemovingAnInstanceDeclaresAndWithdrawsItsWidget(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.spec(Self.spec(), Self.provider)
        if let simulated = h as? SimulatedHarness {
            for key in ["alice", "bob@example.com"] {
                simulated.behaviours.set("\(Self.template)[\(key)]#systemSmall", Self.provider)
            }
        }
        try h.start()
        try h.runtime.addInstance(template: Self.template, key: "alice")
        try h.runtime.addInstance(template: Self.template, key: "bob@example.com")
        let alice = "widgets/feed.alice/systemSmall.json", bob = "widgets/feed.bob-at-example.com/systemSmall.json"
        #expect(h.wait(.seconds(10)) { h.published(alice) != nil && h.published(bob) != nil })
        var widgets = h.runtime.timelineSnapshot().widgets
        #expect(widgets.map(\.kind) == ["feed.alice", "feed.bob-at-example.com"])
        #expect(widgets.map(\.job) == ["\(Self.template)[alice]", "\(Self.template)[bob@example.com]"])
        // Each has its own budget: one reload used of 4.
        #expect(widgets.map(\.budgetUsed) == [1, 1])
        // The instance itself never runs: only its widget's provider.
        #expect(h.runtime.pending("\(Self.template)[alice]") == nil)
        #expect(h.runs().allSatisfy { $0.identifier.hasSuffix("#systemSmall") })
        // A key that would make another instance's kind is refused, nothing changed.
        #expect(throws: InstanceError.self) { try h.runtime.addInstance(template: Self.template, key: "bob-at-example.com") }
        #expect(h.runtime.instances(of: Self.template)?.count == 2)

        try h.runtime.removeInstance(template: Self.template, key: "bob@example.com")
        #expect(h.wait(.seconds(5)) { h.published(bob) == nil })
        #expect(h.published(alice) != nil)
        #expect(h.runtime.timelineSnapshot().widgets.map(\.kind) == ["feed.alice"])

        try h.restart(downtime: .milliseconds(100))
        #expect(h.wait(.seconds(5)) { h.published(alice) != nil })
        widgets = h.runtime.timelineSnapshot().widgets
        #expect(widgets.map(\.kind) == ["feed.alice"])
        // Restored, not asked again: the budget still holds its one reload.
        #expect(widgets.map(\.budgetUsed) == [1])
        #expect(h.published(bob) == nil)
        // Added again after its removal: a fresh widget, published again.
        try h.runtime.addInstance(template: Self.template, key: "bob@example.com")
        #expect(h.wait(.seconds(10)) { h.published(bob) != nil })
    }
}
