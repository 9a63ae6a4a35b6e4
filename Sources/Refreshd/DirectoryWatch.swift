import CLibUV
import Glibc
import RefreshdCore

/// Calls back once a burst of changes in a directory has settled, and keeps watching the
/// directory by its path when it is removed and made again or replaced by a rename.
///
/// uv_fs_event is inotify on Linux: not recursive, and an editor's atomic save shows up as
/// several rename and change events on two names. Events restart a short debounce timer; the
/// callback runs when it expires, so one save makes one reload.
///
/// An inotify watch follows an inode, not a path: once the folder is deleted (or renamed away,
/// as a deploy swapping `jobs.new` into `jobs` does) it reports nothing about the folder now at
/// the path. So the parent directory is watched too, for the folder's name only: when that
/// entry changes, the settled burst re-arms the folder's watch on whatever directory is at the
/// path now (compared by device and inode) before calling back, and the reload reads it. No
/// polling: a missing folder is re-armed when its name reappears in the parent. If the parent
/// itself goes, the watches stay disarmed until SIGHUP, which re-arms both (`rearm`).
package final class DirectoryWatch {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let path: String
    /// The folder's name in its parent.
    private let name: String
    private let event = UnsafeMutablePointer<uv_fs_event_t>.allocate(capacity: 1)
    private let parentEvent = UnsafeMutablePointer<uv_fs_event_t>.allocate(capacity: 1)
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    private let debounce: UInt64
    private let onChange: () -> Void
    private let parent: String
    /// Device and inode of the directory the folder's watch is on; nil while disarmed.
    private var armed: (device: UInt64, inode: UInt64)?
    /// Device and inode of the parent the parent's watch is on; nil while disarmed.
    private var parentArmed: (device: UInt64, inode: UInt64)?
    /// The watched directory (or parent) reported its own deletion or move: its watch is dead
    /// even if a new directory at the path got the same inode number (freed inodes are reused).
    private var lost = false, parentLost = false
    private let parentName: String

    init?(loop: UnsafeMutablePointer<uv_loop_t>, path: String, debounce: Duration, onChange: @escaping () -> Void) {
        self.loop = loop
        self.path = path
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let slash = trimmed.lastIndex(of: "/")
        name = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
        parent = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        parentName = parent.split(separator: "/").last.map(String.init) ?? parent
        self.debounce = UInt64(max(1, debounce.wholeMilliseconds))
        self.onChange = onChange
        let context = Unmanaged.passUnretained(self).toOpaque()
        uv_timer_init(loop, timer)
        timer.pointee.data = context
        uv_fs_event_init(loop, event)
        event.pointee.data = context
        uv_fs_event_init(loop, parentEvent)
        parentEvent.pointee.data = context
        guard arm() else {
            close()
            return nil
        }
        // Best effort: without it, only a folder removed and re-created goes unnoticed.
        armParent()
    }

    /// Starts the parent's watch on the directory at `parent` now, if there is one.
    private func armParent() {
        var info = stat()
        guard stat(parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return }
        let started = uv_fs_event_start(parentEvent, { handle, filename, _, _ in
            guard let data = handle?.pointee.data else { return }
            let entry = filename.map { String(cString: $0) } ?? ""
            Unmanaged<DirectoryWatch>.fromOpaque(data).takeUnretainedValue().parentChanged(entry)
        }, parent, 0)
        if started == 0 { parentArmed = (UInt64(info.st_dev), UInt64(info.st_ino)) }
    }

    /// Re-arms both watches on the directories at their paths now, if they changed: SIGHUP's
    /// way back when the parent itself was removed and made again (loop thread).
    package func rearm() {
        var info = stat()
        let parentPresent = stat(parent, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if parentLost || !parentPresent
            || parentArmed.map({ $0.device != UInt64(info.st_dev) || $0.inode != UInt64(info.st_ino) }) ?? true {
            uv_fs_event_stop(parentEvent)
            parentArmed = nil
            parentLost = false
            armParent()
        }
        rearmIfMoved()
    }

    /// Starts the folder's watch on the directory at `path` now; false if there is none.
    private func arm() -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return false }
        let started = uv_fs_event_start(event, { handle, filename, _, _ in
            guard let data = handle?.pointee.data else { return }
            let entry = filename.map { String(cString: $0) } ?? ""
            Unmanaged<DirectoryWatch>.fromOpaque(data).takeUnretainedValue().changed(entry)
        }, path, 0)
        guard started == 0 else { return false }
        armed = (UInt64(info.st_dev), UInt64(info.st_ino))
        return true
    }

    /// Re-arms the folder's watch if the directory at the path is not the one watched (deleted,
    /// re-created, renamed over), or disarms it when there is none.
    private func rearmIfMoved() {
        var info = stat()
        let present = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if !lost, present, let armed, armed.device == UInt64(info.st_dev), armed.inode == UInt64(info.st_ino) { return }
        uv_fs_event_stop(event)
        armed = nil
        lost = false
        if present { _ = arm() }
    }

    private func changed(_ entry: String) {
        // The folder's own deletion or move is reported under its own name: its watch is gone.
        if entry == name { lost = true }
        // Job files, and templates' instance lists (`instances: users.txt`, issue 23).
        guard entry.isEmpty || entry == name || JobFolder.isJobFile(entry)
            || entry.hasSuffix(".txt") || entry.hasSuffix(".csv") else { return }
        settle()
    }

    private func parentChanged(_ entry: String) {
        if entry == parentName { parentLost = true }
        guard entry == name else { return }
        settle()
    }

    private func settle() {
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let watch = Unmanaged<DirectoryWatch>.fromOpaque(data).takeUnretainedValue()
            watch.rearmIfMoved()
            watch.onChange()
        }, debounce, 0)
    }

    /// Stops watching and frees the handles. No callback reaches this object afterwards.
    func close() {
        uv_fs_event_stop(event)
        uv_fs_event_stop(parentEvent)
        uv_timer_stop(timer)
        closeAndFree(event)
        closeAndFree(parentEvent)
        closeAndFree(timer)
    }
}
