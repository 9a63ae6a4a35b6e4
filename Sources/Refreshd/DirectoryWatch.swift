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

    init?(loop: UnsafeMutablePointer<uv_loop_t>, path: String, debounce: Duration, onChange: @escaping () -> Void) {
        self.loop = loop
        self.debounce = UInt64(max(1, debounce.wholeMilliseconds))
        self.onChange = onChange
        let context = Unmanaged.passUnretained(self).toOpaque()
        uv_timer_init(loop, timer)
        timer.pointee.data = context
        uv_fs_event_init(loop, event)
        event.pointee.data = context
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

    /// Stops watching and frees the handles. No callback reaches this object afterwards.
    func close() {
        uv_fs_event_stop(event)
        uv_timer_stop(timer)
        closeAndFree(event)
        closeAndFree(timer)
    }
}
