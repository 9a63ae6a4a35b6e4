import CLibUV
import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// One SIGCHLD watcher for every command of a loop (issue 35): each command had its own, so
/// every exit woke every running command's `wait4`. Each exit still reaches its own run.
@Suite(.serialized) struct ChildWatchTests {
    @Test func oneSIGCHLDWatcherServesEveryRunningCommand() throws {
        let names = (1...4).map { "t.sleep\($0)" }
        let h = try LoopHarness(runCgroups: false) { s in
            for (index, name) in names.enumerated() {
                s.register(TaskDefinition(identifier: name, kind: .processing),
                           command: CommandJob(argv: ["/bin/sh", "-c", "sleep 0.\(index + 5); exit \(index)"]))
            }
        }
        defer { h.removeDirectory() }
        for name in names { try h.scheduler.submit(TaskRequest(identifier: name, kind: .processing)) }
        h.start()
        // Counted on the loop, while all four run.
        let seen = Seen()
        let scheduler = h.scheduler
        #expect(h.wait {
            scheduler.performOnLoop {
                let counted = (scheduler.processes.count, Self.sigchldWatchers(on: scheduler.loop))
                seen.set(counted)
            }
            usleep(10_000)
            return seen.get()?.running == names.count
        }, "\(h.lines.all)")
        #expect(seen.get()?.watchers == 1)
        #expect(h.wait { names.allSatisfy { h.lines.contains("finished \($0) run") } }, "\(h.lines.all)")
        #expect(h.stop())
        // Each run got its own command's exit.
        for (index, name) in names.enumerated() {
            #expect(h.outcomes()[name] == [index == 0 ? .success : .failure], "\(h.lines.all)")
        }
        #expect(names.dropFirst().enumerated().allSatisfy { offset, name in
            h.lines.all.contains { $0.contains("finished \(name) run") && $0.contains("(exit \(offset + 1))") }
        }, "\(h.lines.all)")
    }

    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var value: (running: Int, watchers: Int)?
        func set(_ new: (Int, Int)) { lock.withLock { value = new } }
        func get() -> (running: Int, watchers: Int)? { lock.withLock { value } }
    }

    /// The active `uv_signal_t` handles watching SIGCHLD on a loop (loop thread).
    static func sigchldWatchers(on loop: UnsafeMutablePointer<uv_loop_t>) -> Int {
        var count = 0
        uv_walk(loop, { handle, argument in
            guard let handle, let argument, handle.pointee.type == UV_SIGNAL, uv_is_active(handle) != 0 else { return }
            let signal = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_signal_t.self)
            if signal.pointee.signum == SIGCHLD { argument.assumingMemoryBound(to: Int.self).pointee += 1 }
        }, &count)
        return count
    }
}
