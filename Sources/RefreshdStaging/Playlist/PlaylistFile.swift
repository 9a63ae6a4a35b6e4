import Foundation

/// Reads a playlist file from the shared container, where other users may plant anything: only
/// a regular file (opened with `O_NOFOLLOW|O_NONBLOCK`, so neither a symlink to `/dev/zero` nor
/// a FIFO can hang a reader) of at most `maximumBytes`. nil otherwise, or when it does not parse.
///
/// The playlist provider runs in refreshd's process, so a 10 GB "playlist" must cost nothing.
enum PlaylistFile {
    /// 1440 switch times naming seven families each fit in well under a megabyte.
    static let maximumBytes = 4 << 20

    static func read(_ path: String) -> Playlist? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= maximumBytes else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n > 0 { count += n } else if n < 0, errno == EINTR { continue } else { break }
        }
        guard count <= maximumBytes else { return nil }  // grew while read
        return try? JSONDecoder().decode(Playlist.self, from: Data(bytes[0..<count]))
    }
}
