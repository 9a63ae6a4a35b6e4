import Testing
@testable import RefreshdCore

/// Timeline templates (issue 23) in the composed machines: an instance's widget is declared by
/// its add and withdrawn by its removal, in the same event; a restore declares the saved
/// instances' widgets before their timelines return; kinds are derived (`InstanceKind`).
@Suite struct InstanceWidgetMachineTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let template = TaskDefinition(identifier: "app.feed.widget", kind: .processing, namespace: "app.feed.widget",
                                         allowance: .seconds(30))
    static let spec = TemplateSpec(parameters: ["user"],
                                   widget: WidgetSpec(kind: "feed.{user}", families: ["systemSmall"], budget: 5))

    static func machines(_ restored: SchedulerCore.RestoredState = SchedulerCore.RestoredState()) -> Machines {
        var m = Machines(scheduler: SchedulerCore(configuration: SchedulerConfiguration()))
        var effects: [SchedulerEffect] = []
        m.handle(.declareTemplate(template, spec), at: t0, into: &effects)
        m.handle(.restore(restored), at: t0, into: &effects)
        return m
    }

    static func add(_ m: inout Machines, _ key: String) throws(InstanceError) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        try m.addInstance(InstanceRecord(template: "app.feed.widget", key: key, values: [:]), at: t0, into: &effects)
        return effects
    }

    @Test func aKindIsTheValueWithEachAtWrittenAsDashAtDash() {
        #expect(InstanceKind.fill("feed.{user}", ["user": "alice"]) == .success("feed.alice"))
        #expect(InstanceKind.fill("feed.{user}", ["user": "bob@example.com"]) == .success("feed.bob-at-example.com"))
        #expect(InstanceKind.fill("{user}.feed", ["user": "a@@b"]) == .success("a-at--at-b.feed"))
        // Never cut, never escaped: refused, naming the parameter.
        guard case let .failure(long) = InstanceKind.fill("feed.{user}", ["user": String(repeating: "x", count: 60)]) else {
            Issue.record("a 65-byte kind was accepted")
            return
        }
        #expect(long.parameter == "user")
        #expect(long.message.hasPrefix("user: widget.kind \"feed.{user}\" would be"))
        guard case let .failure(dot) = InstanceKind.fill("{user}", ["user": ".."]) else {
            Issue.record("a kind '..' was accepted")
            return
        }
        #expect(dot.parameter == "user")
    }

    @Test func addingAnInstanceDeclaresItsWidgetAndAsksForItsFirstTimeline() throws {
        var m = Self.machines()
        let effects = try Self.add(&m, "bob@example.com")
        #expect(effects.contains(.persist(.saveInstance(InstanceRecord(template: "app.feed.widget", key: "bob@example.com",
                                                                       values: ["user": "bob@example.com"])))))
        // No request of its own: its widget's provider is asked for, in its own namespace.
        #expect(m.scheduler.pending("app.feed.widget[bob@example.com]") == nil)
        let provider = try #require(m.scheduler.pending("app.feed.widget[bob@example.com]#systemSmall"))
        #expect(provider.namespace == "widget.feed.bob-at-example.com")
        #expect(m.timelines.definitions["feed.bob-at-example.com"]?.job == "app.feed.widget[bob@example.com]")
        #expect(m.providers["app.feed.widget[bob@example.com]#systemSmall"]
            == WidgetID(kind: "feed.bob-at-example.com", family: .systemSmall))
        #expect(effects.contains { if case .log(.timeline(.providerAsked)) = $0 { true } else { false } })
    }

    @Test func aKindAlreadyAnotherInstancesIsRefusedAndNothingChanges() throws {
        var m = Self.machines()
        _ = try Self.add(&m, "bob@example.com")
        #expect(throws: InstanceError.badValues(template: "app.feed.widget", key: "bob-at-example.com",
                                                problem: "its widget kind \"feed.bob-at-example.com\" is already app.feed.widget[bob@example.com]'s "
                                                    + "(each '@' of a value is written \"-at-\"); expected values that make a kind of its own")) {
            _ = try Self.add(&m, "bob-at-example.com")
        }
        #expect(m.scheduler.instances(of: "app.feed.widget")?.map(\.key) == ["bob@example.com"])
        // A key too long for a kind: the core's refusal, naming the instance and the parameter.
        let long = String(repeating: "y", count: 80)
        do {
            _ = try Self.add(&m, long)
            Issue.record("a key making a 85-byte kind was added")
        } catch {
            guard case let .badValues(_, key, problem) = error else { Issue.record("\(error)"); return }
            #expect(key == long && problem.hasPrefix("user: widget.kind"))
        }
    }

    @Test func removingAnInstanceWithdrawsItsWidgetInTheSameEvent() throws {
        var m = Self.machines()
        _ = try Self.add(&m, "alice")
        var effects: [SchedulerEffect] = []
        m.handle(.removeInstance(template: "app.feed.widget", key: "alice"), at: Self.t0, into: &effects)
        #expect(effects.contains(.persist(.deleteInstance(template: "app.feed.widget", key: "alice"))))
        // Its publication removed (no contents), its record deleted, its provider's request gone.
        #expect(effects.contains(.publish(Publication(path: "widgets/feed.alice/systemSmall.json", contents: nil))))
        #expect(effects.contains(.persist(.deleteRecord(table: TimelineChange.widgetTable, key: "feed.alice/systemSmall"))))
        #expect(m.scheduler.pending("app.feed.widget[alice]#systemSmall") == nil)
        #expect(m.timelines.definitions.isEmpty && m.providers.isEmpty && m.instanceWidgets.isEmpty)
    }

    @Test func aRestoreDeclaresTheSavedInstancesWidgetsBeforeTheirTimelines() throws {
        var m = Self.machines()
        var effects = try Self.add(&m, "alice")
        // What the store would hold: the instance and its widget's record.
        let records = effects.compactMap { effect -> MachineRecord? in
            if case let .persist(.putRecord(record)) = effect { record } else { nil }
        }
        #expect(records.contains { $0.table == TimelineChange.widgetTable && $0.key == "feed.alice/systemSmall" })
        var restored = Self.machines(SchedulerCore.RestoredState(
            records: records, instances: [InstanceRecord(template: "app.feed.widget", key: "alice", values: [:])]))
        #expect(restored.timelines.definitions["feed.alice"]?.job == "app.feed.widget[alice]")
        #expect(restored.timelines.widgetIDs == [WidgetID(kind: "feed.alice", family: .systemSmall)])
        effects.removeAll()
        restored.handle(.removeInstance(template: "app.feed.widget", key: "alice"), at: Self.t0, into: &effects)
        #expect(restored.timelines.widgetIDs.isEmpty)
    }

    /// A changed template (a reload) moves every instance's widget to its new definition; a
    /// withdrawn one withdraws them and keeps the instances, which get them back with it.
    @Test func aRedeclaredTemplateMovesItsInstancesWidgetsAndAWithdrawnOneWithdrawsThem() throws {
        var m = Self.machines()
        _ = try Self.add(&m, "alice")
        var changed = Self.spec
        changed.widget?.budget = 9
        changed.widget?.kind = "news.{user}"
        var effects: [SchedulerEffect] = []
        m.handle(.declareTemplate(Self.template, changed), at: Self.t0, into: &effects)
        #expect(Array(m.timelines.definitions.keys) == ["news.alice"])
        #expect(m.timelines.definitions["news.alice"]?.budget == .limited(9))
        #expect(effects.contains(.publish(Publication(path: "widgets/feed.alice/systemSmall.json", contents: nil))))
        effects.removeAll()
        m.handle(.undeclareTemplate(identifier: "app.feed.widget"), at: Self.t0, into: &effects)
        #expect(m.timelines.definitions.isEmpty && m.providers.isEmpty)
        #expect(m.scheduler.instances(of: "app.feed.widget")?.map(\.key) == ["alice"])
        m.handle(.declareTemplate(Self.template, changed), at: Self.t0, into: &effects)
        #expect(m.timelines.definitions["news.alice"]?.job == "app.feed.widget[alice]")
        #expect(m.scheduler.pending("app.feed.widget[alice]#systemSmall") != nil)
    }
}
