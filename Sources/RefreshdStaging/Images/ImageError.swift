/// Why an image could not be read, rendered or written: the file and the reason, one line.
///
/// Every image failure is a value of this type, never a crash: staging logs it and skips the
/// asset, so one corrupt file in a library costs one log line.
package struct ImageError: Error, Sendable, Hashable, CustomStringConvertible {
    package var file: String
    package var reason: String
    /// The run expired during the decode: not the image's fault, so it is not skipped.
    package var isExpiration = false

    package init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    static func expired(_ file: String) -> ImageError {
        var error = ImageError(file: file, reason: "the run expired while decoding")
        error.isExpiration = true
        return error
    }

    package var description: String { "\(file): \(reason)" }
}
