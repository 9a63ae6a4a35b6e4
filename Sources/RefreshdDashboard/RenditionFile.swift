import Foundation
import Glibc

/// Reads a rendition an entry names, from the shared container and nowhere else.
///
/// The path comes from a provider's output, and the container is shared with other users'
/// programs, so neither is trusted: the path must be relative, without `.`/`..` or empty
/// segments, end in `.jpg`, `.jpeg` or `.png`; the file's resolved path (symlinks followed by
/// `realpath`) must lie inside the container's resolved path; it is opened with `O_NOFOLLOW`
/// and must be a regular file of at most `maxBytes`. A host-only rule (filesystem safety), so
/// it lives here and not in the machines.
package enum RenditionFile {
    static let maxBytes = 16 * 1024 * 1024

    package struct File: Sendable {
        package var bytes: [UInt8]
        package var type: String
    }

    package static func read(_ path: String, in container: String) throws -> File {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.hasPrefix("/"), !segments.isEmpty,
              segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), !path.contains("\0") else {
            throw WebError.notFound("the rendition path “\(path)” is not a plain path inside the shared container")
        }
        let lower = path.lowercased()
        let type: String
        if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") { type = "image/jpeg" }
        else if lower.hasSuffix(".png") { type = "image/png" }
        else { throw WebError.notFound("the rendition “\(path)” is not a .jpg, .jpeg or .png file") }
        guard let root = realpath(container, nil) else { throw WebError.notFound("the shared container \(container) cannot be resolved") }
        let rootPath = String(cString: root)
        free(root)
        guard let resolved = realpath(container + "/" + path, nil) else { throw WebError.notFound("the rendition “\(path)” does not exist") }
        let filePath = String(cString: resolved)
        free(resolved)
        guard filePath.hasPrefix(rootPath.hasSuffix("/") ? rootPath : rootPath + "/") else {
            throw WebError.notFound("the rendition “\(path)” resolves outside the shared container")
        }
        let fd = open(filePath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw WebError.notFound("the rendition “\(path)” cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw WebError.notFound("the rendition “\(path)” is not a regular file") }
        guard info.st_size <= maxBytes else { throw WebError.notFound("the rendition “\(path)” is larger than \(maxBytes) bytes") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return File(bytes: Array(bytes.prefix(done)), type: type)
    }
}
