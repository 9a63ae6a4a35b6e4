import CLibUV
import Glibc

/// One SIGCHLD watcher for every command a scheduler's loop runs (issue 35). Each command had a
/// `uv_signal_t` of its own, so every SIGCHLD woke every running command (libuv writes one
/// message per watcher from its signal handler, and each called `wait4` on its own pid): work
/// linear in the runs in flight at each exit. Here one watcher looks at the dead children
/// (`waitid` with `WNOWAIT`, which leaves them) and waits for each that is a command, by its pid.
///
/// A dead child that is no command's (an orphan that came back to a subreaper, an embedder's
/// own child) hides the others from that look: then every command is asked by its pid, as
/// before, and `others` (the subreaper's orphan reaping) runs after. Referenced (it keeps the
/// loop alive) only while a command runs; closed once the loop closes and none is left.
final class ChildWatch {
    private let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
    private var children: [Int32: CommandProcess] = [:]
    private var closing = false
    /// Called after the commands were waited for, at each SIGCHLD.
    var others: (() -> Void)?

    init(loop: UnsafeMutablePointer<uv_loop_t>) {
        uv_signal_init(loop, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_signal_start(handle, { handle, _ in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<ChildWatch>.fromOpaque(data).takeUnretainedValue().childExited()
        }, SIGCHLD)
        uv_unref(raw)
    }

    private var raw: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
    }

    /// A command just spawned (its pid set): waited for at its exit.
    func add(_ process: CommandProcess) {
        if children.isEmpty { uv_ref(raw) }
        children[process.pid] = process
    }

    /// A command was waited for.
    func remove(_ pid: Int32) {
        guard children.removeValue(forKey: pid) != nil, children.isEmpty else { return }
        if closing { closeNow() } else { uv_unref(raw) }
    }

    func childExited() {
        while true {
            let pid = refreshd_peek_zombie()
            guard pid > 0 else { break }
            guard let process = children[pid] else {
                for process in Array(children.values) { process.reap() }
                break
            }
            process.reap()
            // Not waited for (another thread's wait got it first): not looked at again.
            guard process.hasExited else { break }
        }
        others?()
    }

    /// The loop closes: now, or when the last command has been waited for.
    func close() {
        closing = true
        if children.isEmpty { closeNow() }
    }

    private func closeNow() {
        guard uv_is_closing(raw) == 0 else { return }
        uv_signal_stop(handle)
        // Kept alive until libuv is done with the handle, which it frees.
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        uv_close(raw) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let me = Unmanaged<ChildWatch>.fromOpaque(data)
            me.takeUnretainedValue().handle.deallocate()
            me.release()
        }
    }
}
