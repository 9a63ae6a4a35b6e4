/// What names a job file in a jobs folder, for the reader that loads them (RefreshdConfig) and
/// the host that watches the folder (Refreshd) alike: one list, so a file the watcher ignores
/// is never one a reload would read.
package enum JobFolder {
    /// A job file's name ends so (and does not start with `.`).
    package static let jobFileSuffixes = [".yaml", ".yml"]

    /// Whether `name` (an entry of the folder) is a job file.
    package static func isJobFile(_ name: String) -> Bool {
        !name.hasPrefix(".") && jobFileSuffixes.contains { name.hasSuffix($0) && name.utf8.count > $0.utf8.count }
    }
}
