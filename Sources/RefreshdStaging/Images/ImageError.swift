/// Why an image could not be read, rendered or written: the file and the reason, one line.
///
/// Every image failure is a value of this type, never a crash: staging logs it and skips the
/// asset, so one corrupt file in a library costs one log line.
public struct ImageError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(reason)" }
}
