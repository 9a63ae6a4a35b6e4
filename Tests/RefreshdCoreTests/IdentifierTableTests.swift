import Testing
@testable import RefreshdCore

/// Identifiers interned to slots (`IdentifierTable`) and definitions stored by slot with equal
/// rules once (`TaskDefinitions`), as the core keeps them.
@Suite struct IdentifierTableTests {
    @Test func everyNameKeepsOneSlotThroughGrowth() {
        var t = IdentifierTable()
        let names = (0..<5_000).map { "job.\($0)" }
        for (i, n) in names.enumerated() { #expect(t.intern(n) == Int32(i)) }
        #expect(t.count == names.count)
        for (i, n) in names.enumerated() {
            #expect(t[n] == Int32(i))
            #expect(t[i] == n)
            #expect(t.intern(n) == Int32(i))  // interning again reserves nothing
        }
        #expect(t.count == names.count)
        #expect(t["job.5000"] == nil)
        #expect(IdentifierTable()["anything"] == nil)
    }

    @Test func aThousandIdentifiersWithTheSameRulesStoreThemOnce() throws {
        var d = TaskDefinitions()
        for i in 0..<1_000 { d.set(TaskDefinition(identifier: "bench.\(i)", allowance: .seconds(10))) }
        d.set(TaskDefinition(identifier: "other", kind: .processing))
        #expect(d.count == 1_001)
        #expect(d.rules.count == 2)
        let got = try #require(d["bench.7"])
        #expect(got == TaskDefinition(identifier: "bench.7", allowance: .seconds(10)))
        #expect(d["other"]?.kind == .processing)
        // A rule seen before (not the last one) is found again, not stored twice.
        d.set(TaskDefinition(identifier: "bench.1000", allowance: .seconds(10)))
        #expect(d.rules.count == 2)
        #expect(d.identifiers.prefix(2) == ["bench.0", "bench.1"])
    }

    @Test func withdrawnIdentifiersAreGoneAndComeBackAtTheirSlot() {
        var d = TaskDefinitions()
        d.set(TaskDefinition(identifier: "a"))
        d.set(TaskDefinition(identifier: "b", namespace: "x"))
        d["a"] = nil
        #expect(!d.contains("a") && d["a"] == nil && d.count == 1)
        d["never"] = nil
        #expect(d.count == 1 && d.table.count == 2)
        d.set(TaskDefinition(identifier: "a", grace: .seconds(9)))
        #expect(d["a"]?.grace == .seconds(9) && d.count == 2 && d.table["a"] == 0)
        #expect(d.values.map(\.identifier) == ["a", "b"])
    }

    /// The core's queue shares the definitions' table (one copy of the names) and still finds
    /// each identifier's pending request; a queue that interned a name of its own keeps its own.
    @Test func theQueueSharesTheDefinitionsTable() throws {
        var core = SchedulerCore(configuration: SchedulerConfiguration(maxPendingAppRefresh: 10),
                                 definitions: (0..<100).map { TaskDefinition(identifier: "a.\($0)") })
        #expect(core.queue.ids.sharesNames(with: core.definitions.table))
        core.declare(TaskDefinition(identifier: "late"))
        #expect(core.queue.ids.sharesNames(with: core.definitions.table))
        let now = Instant(milliseconds: 1_000)
        _ = try core.submit(TaskRequest(identifier: "late", earliestBeginDate: now + .seconds(5)), at: now)
        _ = try core.submit(TaskRequest(identifier: "a.3", earliestBeginDate: now + .seconds(1)), at: now)
        #expect(core.pending("late")?.identifier == "late")
        #expect(core.pendingRequests().map(\.identifier) == ["a.3", "late"])
        core.queue.intern("only.in.queue")
        core.declare(TaskDefinition(identifier: "after"))
        #expect(!core.queue.ids.sharesNames(with: core.definitions.table))
        _ = try core.submit(TaskRequest(identifier: "after", earliestBeginDate: now + .seconds(9)), at: now)
        #expect(core.pendingRequests().map(\.identifier) == ["a.3", "late", "after"])
        #expect(core.checkInvariants().isEmpty)
    }

    /// Instances are stored as their key and template (issue 23): a key of up to 15 bytes needs
    /// no heap string, the whole name is built when asked, and a name keeps one slot whichever
    /// way it was interned (as a plain name or as an instance), through the indexes' growth.
    @Test func instancesAreStoredAsTheirKeyAndFoundByTheirWholeName() {
        var t = IdentifierTable()
        let plain = t.intern("app.x")
        let slots = (0..<3_000).map { t.intern(template: "bench.feed", key: "u\($0)") }
        #expect(t.count == 3_001)
        for (i, s) in slots.enumerated() {
            #expect(t.names[Int(s)] == "u\(i)")  // the key alone is stored
            #expect(t[Int(s)] == "bench.feed[u\(i)]")
            #expect(t["bench.feed[u\(i)]"] == s)
            #expect(t.slot(template: "bench.feed", key: "u\(i)") == s)
            #expect(t.intern("bench.feed[u\(i)]") == s)
            #expect(t.intern(template: "bench.feed", key: "u\(i)") == s)
        }
        #expect(t.count == 3_001)
        #expect(t["app.x"] == plain && t[Int(plain)] == "app.x" && t.key(at: plain) == nil)
        #expect(t["bench.feed[u3000]"] == nil && t["other[u1]"] == nil && t.slot(template: "other", key: "u1") == nil)
        // A plain name of an instance's shape, interned first, is the instance's slot too.
        let early = t.intern("late.tpl[k]")
        #expect(t.intern(template: "late.tpl", key: "k") == early)
        #expect(t.slot(template: "late.tpl", key: "k") == early && t[Int(early)] == "late.tpl[k]")
        #expect(t.count == 3_002)
    }

    /// A whole name is found by its parts without copying them (a template compared byte by byte
    /// while there are at most eight, through the dictionary beyond), and a plain name of an
    /// instance's shape beside a template's instances keeps its own slot.
    @Test func instanceNamesAreFoundByTheirPartsAmongManyTemplates() {
        var t = IdentifierTable()
        let templates = (0..<12).map { "a.rather.long.template.\($0)" }
        var slots: [String: Int32] = [:]
        for (i, template) in templates.enumerated() {
            for k in 0..<50 { slots["\(template)[k\(k)]"] = t.intern(template: template, key: "k\(k)") }
            // Found after each new template, on both sides of the eighth.
            for (name, slot) in slots.sorted(by: { $0.key < $1.key }) where name.hasPrefix(templates[i / 2]) {
                #expect(t[name] == slot && t[Int(slot)] == name)
            }
        }
        #expect(t.count == 600)
        #expect(t["a.rather.long.template.3[k50]"] == nil && t["a.rather.long.template.12[k0]"] == nil)
        let odd = t.intern("a.rather.long.template.3[plain]")
        #expect(t.count == 601 && t["a.rather.long.template.3[plain]"] == odd && t.key(at: odd) == nil)
        #expect(t["a.rather.long.template.3[k7]"] == slots["a.rather.long.template.3[k7]"])
    }

    /// Instances added by slot (their first request without a definition of their own) keep the
    /// queue on the definitions' table and give the same requests a submit by name would.
    @Test func instancesAddedBySlotKeepOneTableAndTheirRequests() throws {
        var core = SchedulerCore(configuration: SchedulerConfiguration(maxPendingAppRefresh: 1))
        let t0 = Instant(milliseconds: 1_800_000_000_000)
        let template = TaskDefinition(identifier: "app.feed", namespace: "app.feed", accuracy: .seconds(5))
        _ = core.handle(.declareTemplate(template, TemplateSpec(parameters: ["user"], firstRequest: .after(.seconds(60)))), at: t0)
        for i in 0..<100 {
            _ = core.handle(.addInstance(InstanceRecord(template: "app.feed", key: "u\(i)", values: [:])), at: t0)
        }
        #expect(core.queue.ids.sharesNames(with: core.definitions.table))
        #expect(core.pendingCount == 100)
        let p = try #require(core.pending("app.feed[u7]"))
        #expect(p.identifier == "app.feed[u7]" && p.namespace == "app.feed" && p.earliest == t0 + .seconds(60))
        #expect(p.sequence == 8 && p.origin == .submitted)
        #expect(core.nextWakeUp == t0 + .seconds(65))  // the template's accuracy window
        #expect(core.instance("app.feed[u99]")?.values == ["user": "u99"])
        #expect(core.checkInvariants().isEmpty)
    }
}
