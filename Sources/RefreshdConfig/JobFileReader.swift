#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RefreshdCore

/// Lists a job folder and reads its files with POSIX calls, so that every failure says why.
///
/// - Names are read as bytes: a name that is not UTF-8 is reported (escaped) instead of being
///   skipped or mangled.
/// - A file is opened once and checked with `fstat`: a directory, a named pipe (which would
///   block a plain read) or a device named `x.yaml` is named as such, a broken symbolic link
///   says where it points, and a file over `JobFileLimits.maximumFileSize` is refused from its
///   size without being read.
/// - Text that is not UTF-8 is reported at the line and column of the first bad byte.
enum JobFileReader {
    /// One directory entry that looks like a job file.
    struct Entry {
        /// The name, with bytes that are not UTF-8 shown as `\xFF`.
        var name: String
        /// False when the name is not UTF-8 (then `name` is only for showing).
        var isUTF8: Bool
    }

    /// Why a folder cannot be listed.
    enum ListingError: Error {
        case missing
        case notAFolder
        case unreadable(String)
    }

    /// The `*.yaml` and `*.yml` entries of `directory` (not starting with `.`), sorted by name.
    static func entries(of directory: String) throws(ListingError) -> [Entry] {
        guard let handle = opendir(directory) else {
            let code = errno
            switch code {
            case ENOENT: throw .missing
            case ENOTDIR: throw .notAFolder
            default: throw .unreadable(reason(code))
            }
        }
        defer { closedir(handle) }
        var entries: [Entry] = []
        while let entry = readdir(handle) {
            let bytes: [UInt8] = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            guard bytes.first != UInt8(ascii: "."),
                  JobFolder.jobFileSuffixes.contains(where: { hasSuffix(bytes, $0) }) else { continue }
            let valid = bytes.withUnsafeBytes { SourceText.firstInvalidUTF8(in: $0) == nil }
            entries.append(Entry(name: valid ? String(decoding: bytes, as: UTF8.self) : shown(bytes), isUTF8: valid))
        }
        return entries.sorted { $0.name < $1.name }
    }

    /// A file's text and when it was last modified.
    struct Contents {
        var text: String
        /// `st_mtim` in nanoseconds since the epoch.
        var modified: Int64
    }

    /// The text of the job file at `path`, or where and why it cannot be used.
    static func contents(of path: String, kind: FileKind = .job) -> Result<String, YAMLComposer.Failure> {
        file(at: path, kind: kind).map(\.text)
    }

    /// The text of the job file at `path` and its modification time, or where and why it cannot be used.
    static func file(at path: String, kind: FileKind = .job) -> Result<Contents, YAMLComposer.Failure> {
        func fail(_ message: String, _ location: Location = .start) -> Result<Contents, YAMLComposer.Failure> {
            .failure(YAMLComposer.Failure(location: location, message: message))
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return fail(openFailure(path, errno, kind)) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return fail("expected a readable \(kind.noun), but it cannot be read (\(reason(errno)))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return fail("expected a \(kind.noun), but this is a directory\(kind == .job ? " (job folders are not read recursively)" : "")")
        case S_IFIFO: return fail("expected a regular \(kind.noun), but this is a named pipe (FIFO)")
        case S_IFSOCK: return fail("expected a regular \(kind.noun), but this is a socket")
        default: return fail("expected a regular \(kind.noun), but this is a device")
        }
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let limit = JobFileLimits.maximumFileSize
        if Int(info.st_size) > limit { return fail(JobFileParser.sizeMessage(bytes: Int(info.st_size), kind: kind)) }
        // Read at most one byte more than the limit, in case the file grew since fstat.
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size), limit) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { return fail("expected a readable \(kind.noun), but it cannot be read (\(reason(errno)))") }
            if got == 0 { break }
            count += got
            if count == bytes.count, count <= limit { bytes += [UInt8](repeating: 0, count: min(4096, limit + 1 - count)) }
        }
        if count > limit { return fail("the file grew past \(JobFileParser.grouped(limit)) bytes while it was read; "
            + "expected a \(kind.noun) of at most 1 MiB") }
        return bytes.withUnsafeBytes { raw in
            let content = UnsafeRawBufferPointer(rebasing: raw[..<count])
            if let offset = SourceText.firstInvalidUTF8(in: content) {
                let byte = String(content[offset], radix: 16, uppercase: true)
                return fail("expected UTF-8 text, found the byte 0x\(byte.count == 1 ? "0" + byte : byte), which is not valid UTF-8 here",
                            SourceText.location(ofInvalidByteAt: offset, in: content))
            }
            return .success(Contents(text: String(decoding: content, as: UTF8.self), modified: modified))
        }
    }

    /// Why `open` failed, with the target of a broken symbolic link.
    private static func openFailure(_ path: String, _ code: Int32, _ kind: FileKind) -> String {
        var info = stat()
        if code == ENOENT || code == ELOOP, lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            if code == ELOOP { return "expected a readable \(kind.noun), but it is a symbolic link that loops" }
            var target = [CChar](repeating: 0, count: 4096)
            let length = readlink(path, &target, target.count - 1)
            let shownTarget = length > 0
                ? EchoText.quoted(String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self), limit: 120)
                : "a missing file"
            return "expected a readable \(kind.noun), but it is a broken symbolic link (to \(shownTarget), which does not exist)"
        }
        if code == ENOENT { return "expected a readable \(kind.noun), but it no longer exists" }
        return "expected a readable \(kind.noun), but it cannot be read (\(reason(code)))"
    }

    /// `Permission denied`, as `strerror` says it.
    static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    private static func hasSuffix(_ bytes: [UInt8], _ suffix: String) -> Bool {
        let tail = Array(suffix.utf8)
        return bytes.count > tail.count && Array(bytes.suffix(tail.count)) == tail
    }

    /// A name with each byte that is not part of valid UTF-8 written as `\xFF`.
    static func shown(_ bytes: [UInt8]) -> String {
        var result = ""
        var rest = bytes[...]
        while !rest.isEmpty {
            let invalid = Array(rest).withUnsafeBytes { SourceText.firstInvalidUTF8(in: $0) }
            let validCount = invalid ?? rest.count
            result += String(decoding: rest.prefix(validCount), as: UTF8.self)
            guard validCount < rest.count else { break }
            let byte = rest[rest.startIndex + validCount]
            result += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            rest = rest.dropFirst(validCount + 1)
        }
        return result
    }
}
