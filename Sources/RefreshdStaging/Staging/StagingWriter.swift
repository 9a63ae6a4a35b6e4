import Foundation
import RefreshdRuntime

/// Every change staging makes to the container, as numbered write steps: a file is written to a
/// temporary name and fsynced (one step), then renamed over its final name and its folder
/// fsynced (another); a removal is one step. A reader therefore sees each file whole or not at
/// all. After each step the test hook may stop the run there, as a kill would.
///
/// Everything goes through folder descriptors opened without following symlinks
/// (`AtomicFile.Directory`); temporary files have unpredictable names created with
/// `O_EXCL|O_NOFOLLOW`, so two runs (a retry racing an abandoned one) never share one.
final class StagingWriter {
    /// Thrown when the hook stops the run after a step.
    struct Stopped: Error {
        var step: Int
    }

    private let afterStep: (@Sendable (Int) -> Bool)?
    private(set) var steps = 0

    init(afterStep: (@Sendable (Int) -> Bool)?) {
        self.afterStep = afterStep
    }

    private func step() throws(Stopped) {
        steps += 1
        if let afterStep, !afterStep(steps) { throw Stopped(step: steps) }
    }

    /// An unpredictable temporary name for `name` (recorded before it is created).
    static func temporaryName(for name: String) -> String {
        ".tmp-\(name).\(AtomicFile.randomSuffix()).tmp"
    }

    /// Writes `name` in `folder` atomically through `temporary`: `produce` writes (and fsyncs)
    /// the open descriptor it is given, with the temporary's path for messages.
    func write(in folder: AtomicFile.Directory, name: String, temporary: String,
               produce: (Int32, String) throws -> Void) throws {
        let fd = openat(folder.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StagingFailure("\(folder.path(of: temporary)): cannot create: \(String(cString: strerror(errno)))")
        }
        do {
            defer { close(fd) }
            try produce(fd, folder.path(of: temporary))
        } catch {
            unlinkat(folder.descriptor, temporary, 0)
            throw error
        }
        try step()
        guard renameat(folder.descriptor, temporary, folder.descriptor, name) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(folder.descriptor, temporary, 0)
            throw StagingFailure("\(folder.path(of: name)): cannot rename into place: \(reason)")
        }
        folder.sync()
        try step()
    }

    /// Writes `data` to `name` in `folder` atomically.
    func write(in folder: AtomicFile.Directory, name: String, temporary: String, data: Data) throws {
        try write(in: folder, name: name, temporary: temporary) { fd, path in
            var written = 0
            while written < data.count {
                let n = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, data.count - written) }
                if n > 0 { written += n } else if n < 0, errno == EINTR { continue } else { break }
            }
            guard written == data.count, fsync(fd) == 0 else {
                throw StagingFailure("\(path): cannot write: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Removes the file `name` of `folder` (never a symlink's target; missing is fine): one step.
    func remove(_ name: String, in folder: AtomicFile.Directory) throws {
        unlinkat(folder.descriptor, name, 0)
        folder.sync()
        try step()
    }

    /// Removes the files `names` of the sub-folder `name`, then the sub-folder if that left it
    /// empty (what refreshd did not create stays, and so does its folder): one step.
    func removeFolder(_ name: String, files names: [String], in folder: AtomicFile.Directory) throws {
        if let sub = try? folder.subdirectory(name, create: false) {
            for file in names { unlinkat(sub.descriptor, file, 0) }
            sub.sync()
        }
        folder.removeFolder(name)
        folder.sync()
        try step()
    }
}
