import Foundation

/// Every change staging makes to the container, as numbered write steps: a file is written to a
/// temporary name and fsynced (one step), then renamed over its final name and its folder
/// fsynced (another); a removal is one step. A reader therefore sees each file whole or not at
/// all. After each step the test hook may stop the run there, as a kill would.
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

    /// Writes `path` atomically: `produce` writes (and fsyncs) the temporary path it is given.
    func write(_ path: String, produce: (String) throws -> Void) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.tmp-" + (path as NSString).lastPathComponent
        do {
            try produce(temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        try step()
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw StagingFailure("\(path): cannot rename into place: \(reason)")
        }
        StagingWriter.syncDirectory(directory)
        try step()
    }

    /// Writes `data` to `path` atomically.
    func write(_ path: String, data: Data) throws {
        try write(path) { temporary in
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw StagingFailure("\(temporary): cannot create: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == data.count, fsync(fd) == 0 else {
                throw StagingFailure("\(temporary): cannot write: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Removes a file or a folder and what it holds.
    func remove(_ path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        StagingWriter.syncDirectory((path as NSString).deletingLastPathComponent)
        try step()
    }

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
