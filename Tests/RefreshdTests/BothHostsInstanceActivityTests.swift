import Foundation
import Synchronization
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Issue 23: an instance's activities are its own, on both hosts. A run of instance `alice`
/// starts `pack-alice`; a run of instance `mallory` (and of a plain job) that writes an update
/// and an end of `pack-alice` on its results channel is refused, one log line each, and
/// `pack-alice` keeps its content; removing `mallory` ends only `mallory`'s activity.
@Suite(.serialized) struct BothHostsInstanceActivityTests {
    static let template = "t.pack"

    /// Each instance starts `pack-KEY`; `mallory`'s run also updates and ends `pack-alice`.
    static let script = """
        printf '{"activity":"start","id":"pack-%s","type":"Pack","content":{"by":"%s"}}\\n' "$1" "$1" >&3
        if [ "$1" = mallory ]; then
          printf '{"activity":"update","id":"pack-alice","content":{"by":"mallory"}}\\n' >&3
          printf '{"activity":"end","id":"pack-alice","content":{"by":"mallory"},"dismissal":"immediate"}\\n' >&3
        fi
        sleep 0.2
        """

    static let foreign = [#"{"activity":"update","id":"pack-alice","content":{"by":"mallory"}}"#,
                          #"{"activity":"end","id":"pack-alice","content":{"by":"mallory"},"dismissal":"immediate"}"#]

    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func add(_ o: RuntimeObservation) { all.withLock { $0.append(o.message) } }
        func matching(_ text: String) -> [String] { all.withLock { $0.filter { $0.contains(text) } } }
    }

    @Test(arguments: HostKind.allCases)
    func anInstanceCannotUpdateOrEndAnotherInstancesActivity(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let definition = TaskDefinition(identifier: Self.template, kind: .processing, namespace: Self.template,
                                        allowance: .seconds(10), resubmit: .after(.seconds(3600)))
        let spec = JobSpec(definition: definition, command: CommandJob(argv: ["/bin/sh", "-c", Self.script, "sh", "{user}"]),
                           template: TemplateSpec(parameters: ["user"]))
        switch h {
        case let libuv as LibuvHarness: libuv.specs.append(spec)
        case let simulated as SimulatedHarness:
            simulated.specs.append(spec)
            for user in ["alice", "mallory"] {
                let own = #"{"activity":"start","id":"pack-\#(user)","type":"Pack","content":{"by":"\#(user)"}}"#
                simulated.behaviours.set("\(Self.template)[\(user)]",
                                         Work(duration: .milliseconds(200), results: [own] + (user == "mallory" ? Self.foreign : [])))
            }
        default: break
        }
        // A plain job writes the same lines: refused too (the activity is alice's).
        h.job(TaskDefinition(identifier: "t.other", kind: .processing), Work(results: Self.foreign))
        try h.start()
        let lines = Lines()
        h.runtime.observe { lines.add($0) }
        func activity(_ id: String) -> ActivitySnapshot.Entry? { h.runtime.activitySnapshot().activities.first { $0.id == id } }

        try h.runtime.addInstance(template: Self.template, key: "alice")
        #expect(h.wait(.seconds(10)) { h.outcomes("\(Self.template)[alice]") == [.success] })
        #expect(activity("pack-alice")?.state == .active)
        #expect(activity("pack-alice")?.owner == "\(Self.template)[alice]")

        try h.runtime.addInstance(template: Self.template, key: "mallory")
        #expect(h.wait(.seconds(10)) { h.outcomes("\(Self.template)[mallory]") == [.success] })
        try h.runtime.submit(TaskRequest(identifier: "t.other", kind: .processing))
        #expect(h.wait(.seconds(10)) { h.outcomes("t.other") == [.success] })
        // alice's activity is untouched: still active, never updated by another's line.
        let alice = try #require(activity("pack-alice"))
        #expect(alice.state == .active)
        #expect(alice.updatesApplied == 0)
        #expect(activity("pack-mallory")?.state == .active)
        // One line for each refused line, naming the activity, its owner and the writer.
        let refused = lines.matching("of activity pack-alice by ")
        #expect(refused.count == 4, "\(refused)")
        #expect(refused.contains("update of activity pack-alice by \(Self.template)[mallory] refused: the activity is "
            + "\(Self.template)[alice]'s, and an instance's activities are its own; expected a line of \(Self.template)[alice]'s runs"))
        #expect(refused.contains { $0.hasPrefix("end of activity pack-alice by t.other refused") })
        #expect(refused.allSatisfy { !$0.contains("\n") })

        // Removing mallory ends mallory's activity only.
        try h.runtime.removeInstance(template: Self.template, key: "mallory")
        #expect(h.wait(.seconds(5)) { activity("pack-mallory").map { $0.state != .active } ?? true })
        #expect(activity("pack-alice")?.state == .active)
        try h.runtime.removeInstance(template: Self.template, key: "alice")
        #expect(h.wait(.seconds(5)) { activity("pack-alice").map { $0.state != .active } ?? true })
    }
}
