#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stdio stream the C image libraries read or write, closed when the value goes away.
///
/// Opening names the file and the system's reason on failure; `sync()` flushes and fsyncs, for
/// the atomic writes of staging.
final class CFile {
    let path: String
    let handle: UnsafeMutablePointer<FILE>

    init(path: String, mode: String) throws(ImageError) {
        guard let handle = fopen(path, mode) else {
            throw ImageError(file: path, reason: "cannot open: \(CFile.systemError())")
        }
        self.path = path
        self.handle = handle
    }

    /// A stream on a duplicate of `descriptor` (the caller keeps and closes its own).
    init(descriptor: Int32, path: String, mode: String = "wb") throws(ImageError) {
        let copy = dup(descriptor)
        guard copy >= 0, let handle = fdopen(copy, mode) else {
            let error = ImageError(file: path, reason: "cannot open: \(CFile.systemError())")
            if copy >= 0 { close(copy) }
            throw error
        }
        self.path = path
        self.handle = handle
    }

    deinit { fclose(handle) }

    /// Up to `count` bytes from the start of the file, the position left at the start.
    func leadingBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = fread(&bytes, 1, count, handle)
        rewind(handle)
        return Array(bytes.prefix(read))
    }

    /// Flushes stdio's buffer and the kernel's: the bytes are on disk when this returns.
    func sync() throws(ImageError) {
        guard fflush(handle) == 0, fsync(fileno(handle)) == 0 else {
            throw ImageError(file: path, reason: "cannot write: \(CFile.systemError())")
        }
    }

    static func systemError() -> String { String(cString: strerror(errno)) }
}
