import Foundation
import RefreshdCore
import RefreshdRuntime

/// What staging created under its folder of the shared container, so that the retention sweep
/// removes only that: `<container>/<folder>/.refreshd-staged`, one path a line relative to the
/// folder (`playlists/2026-11-24.json`, `renditions/2026-11-24-<manifest>/` for a folder,
/// `renditions/2026-11-24-<manifest>/<file>`, temporary names included).
///
/// A name is recorded (and the record saved) before the file or folder is created, so a kill at
/// any point leaves nothing unrecorded. Files other users put in the container, or an earlier
/// refreshd staged without a record, are never removed. Lines that are not such paths are ignored.
struct OwnershipRecord {
    static let fileName = ".refreshd-staged"
    /// A record larger than this is not read (every entry is then kept).
    static let maximumBytes = 16 << 20

    private(set) var entries: Set<String> = []
    private var changed = false

    /// The record in `root` (empty when there is none, or it is a symlink or unreadable).
    static func load(_ root: AtomicFile.Directory) -> OwnershipRecord {
        var record = OwnershipRecord()
        let fd = openat(root.descriptor, fileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return record }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= maximumBytes {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { bytes += chunk[0..<n] } else if n < 0, errno == EINTR { continue } else { break }
        }
        // Over the cap: not read at all, rather than parsed up to a cut last line that may
        // name a different (shorter) path.
        guard bytes.count <= maximumBytes else { return record }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where isValid(String(line)) {
            record.entries.insert(String(line))
        }
        return record
    }

    /// `playlists/NAME`, `renditions/FOLDER/` or `renditions/FOLDER/NAME`, each name plain.
    static func isValid(_ entry: String) -> Bool {
        let parts = entry.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let plain = AtomicFile.isPlainName
        switch parts.count {
        case 2: return parts[0] == "playlists" && plain(parts[1])
        case 3: return parts[0] == "renditions" && plain(parts[1]) && (parts[2].isEmpty || plain(parts[2]))
        default: return false
        }
    }

    mutating func add(_ entry: String) {
        if entries.insert(entry).inserted { changed = true }
    }

    mutating func remove(_ entry: String) {
        if entries.remove(entry) != nil { changed = true }
    }

    /// Writes the record (atomically, in `root`) if it changed.
    mutating func save(_ root: AtomicFile.Directory) throws {
        guard changed else { return }
        do {
            try root.write(Array(entries.sorted().joined(separator: "\n").utf8) + [10], to: Self.fileName)
        } catch {
            throw StagingFailure("\(error)")
        }
        changed = false
    }

    /// Recorded files of `playlists/`.
    var playlists: [String] {
        entries.compactMap { $0.hasPrefix("playlists/") ? String($0.dropFirst("playlists/".count)) : nil }.sorted()
    }

    /// Recorded folders of `renditions/`.
    var renditionFolders: [String] {
        entries.compactMap { entry -> String? in
            guard entry.hasPrefix("renditions/"), entry.hasSuffix("/") else { return nil }
            return String(entry.dropFirst("renditions/".count).dropLast())
        }.sorted()
    }

    /// Recorded files of the rendition folder `folder`.
    func files(inRenditionFolder folder: String) -> [String] {
        let prefix = "renditions/\(folder)/"
        return entries.compactMap { entry -> String? in
            guard entry.hasPrefix(prefix), entry.count > prefix.count else { return nil }
            return String(entry.dropFirst(prefix.count))
        }.sorted()
    }
}
