/// A small file a machine shows to readers outside refreshd (a widget's current entry, a live
/// activity's state), written by the host into the shared container.
///
/// The host writes it atomically (temporary file, fsync, rename, directory fsync), so a reader
/// sees the old complete file or the new complete one, never a torn one. Publications are
/// effects like any other: they happen only after the event's state changes were committed.
package struct Publication: Sendable, Hashable {
    /// Relative to the shared container, `/`-separated, no `..` (e.g. `widgets/wallpaper/systemSmall.json`).
    package var path: String
    /// The file's new contents; nil removes the file.
    package var contents: String?

    package init(path: String, contents: String?) {
        self.path = path
        self.contents = contents
    }

    /// Whether `path` stays inside the container: relative, no empty, `.` or `..` component.
    package var isContained: Bool {
        guard !path.isEmpty, !path.hasPrefix("/") else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && !part.utf8.contains(0)
        }
    }
}
