import RefreshdCore
import Testing
@testable import RefreshdRuntime

/// The runtime's handlers by interned slot: closures kept in the slot, commands and actions by
/// index, each identifier's handler found again after replacements and withdrawals.
@Suite struct HandlerTableTests {
    @Test func handlersComeBackAsStoredAndASlotStaysSmall() throws {
        var t = HandlerTable()
        let body: @Sendable (RefreshTask) -> Void = { $0.setTaskCompleted(success: true) }
        for i in 0..<1_000 { t["a.\(i)"] = .inProcess(body) }
        t["cmd"] = .command(CommandJob(argv: ["/bin/true"]))
        t["cmd"] = .command(CommandJob(argv: ["/bin/echo", "again"]))  // a reload reuses its index
        #expect(t.others.count == 1)
        guard case let .command(job)? = t["cmd"] else { Issue.record("cmd lost its command"); return }
        #expect(job.argv == ["/bin/echo", "again"])
        guard case .inProcess? = t["a.999"] else { Issue.record("a.999 lost its closure"); return }
        t["a.5"] = nil
        #expect(t["a.5"] == nil && t["never"] == nil)
        t["never"] = nil
        #expect(t.bySlot.count == 1_001)
        t["a.5"] = .command(CommandJob(argv: ["/bin/false"]))
        guard case let .command(back)? = t["a.5"] else { Issue.record("a.5 lost its command"); return }
        #expect(back.argv == ["/bin/false"] && t.others.count == 2)
        // A slot holds a closure or an index: well under the 64-byte optional `TaskHandler`.
        #expect(MemoryLayout<HandlerTable.Stored?>.stride <= 24)
    }
}
