import Foundation
@testable import RefreshdStaging

/// A fresh directory under /tmp, removed with everything in it when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/refreshd-staging-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp/refreshd-staging-failed"
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `data` to a file inside; returns its path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        try data.write(to: URL(fileURLWithPath: file(name)))
        return file(name)
    }

    /// A folder inside, created.
    func folder(_ name: String) -> String {
        let folder = file(name)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A small JPEG (or PNG) painted by the sample painter.
    @discardableResult
    func image(_ name: String, width: Int = 640, height: Int = 384, format: ImageFormat = .jpeg,
               orientation: ExifOrientation = .up, seed: Int = 0, in folder: String? = nil) throws -> String {
        let path = ((folder ?? self.path) as NSString).appendingPathComponent(name)
        try SampleLibrary.write(path: path, width: width, height: height, format: format, orientation: orientation, seed: seed)
        return path
    }
}
