import CLibUV
import Glibc

/// Calls back once a burst of changes in a directory has settled.
///
/// uv_fs_event is inotify on Linux: not recursive, and an editor's atomic save shows up as
/// several rename and change events on two names. Events restart a short debounce timer; the
/// callback runs when it expires, so one save makes one reload.
final class DirectoryWatch {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let event = UnsafeMutablePointer<uv_fs_event_t>.allocate(capacity: 1)
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    private let debounce: UInt64
    private let onChange: () -> Void
    private var open = 0

    init?(loop: UnsafeMutablePointer<uv_loop_t>, path: String, debounce: Duration, onChange: @escaping () -> Void) {
        self.loop = loop
        self.debounce = UInt64(max(1, debounce.wholeMilliseconds))
        self.onChange = onChange
        let context = Unmanaged.passUnretained(self).toOpaque()
        uv_timer_init(loop, timer)
        timer.pointee.data = context
        uv_fs_event_init(loop, event)
        event.pointee.data = context
        open = 2
        let started = uv_fs_event_start(event, { handle, filename, _, _ in
            guard let data = handle?.pointee.data else { return }
            let name = filename.map { String(cString: $0) } ?? ""
            Unmanaged<DirectoryWatch>.fromOpaque(data).takeUnretainedValue().changed(name)
        }, path, 0)
        if started != 0 {
            close()
            return nil
        }
    }

    private func changed(_ name: String) {
        guard name.isEmpty || name.hasSuffix(".yaml") || name.hasSuffix(".yml") else { return }
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<DirectoryWatch>.fromOpaque(data).takeUnretainedValue().onChange()
        }, debounce, 0)
    }

    /// Stops watching and frees the handles (the object must live until the loop closes them).
    func close() {
        uv_fs_event_stop(event)
        uv_timer_stop(timer)
        let context = Unmanaged.passRetained(self).toOpaque()
        event.pointee.data = context
        timer.pointee.data = context
        for handle in [UnsafeMutableRawPointer(event), UnsafeMutableRawPointer(timer)] {
            uv_close(handle.assumingMemoryBound(to: uv_handle_t.self)) { h in
                guard let data = h?.pointee.data else { return }
                let unmanaged = Unmanaged<DirectoryWatch>.fromOpaque(data)
                let me = unmanaged.takeUnretainedValue()
                me.open -= 1
                if me.open == 0 { unmanaged.release() }
            }
        }
    }

    deinit {
        event.deallocate()
        timer.deallocate()
    }
}
