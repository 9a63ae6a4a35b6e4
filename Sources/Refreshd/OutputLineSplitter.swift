/// Splits a byte stream into lines, holding a partial line until its newline (or the end).
///
/// Very long lines are cut at `maxLine` bytes so a job cannot make refreshd buffer without bound.
struct OutputLineSplitter {
    private var buffer: [UInt8] = []
    let maxLine: Int

    init(maxLine: Int = 16 * 1024) { self.maxLine = maxLine }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lines.append(take())
            } else {
                buffer.append(byte)
                if buffer.count >= maxLine { lines.append(take()) }
            }
        }
        return lines
    }

    /// Forgets a partial line (its bytes were dropped, so its end would be a wrong line).
    mutating func reset() { buffer.removeAll(keepingCapacity: true) }

    /// The unterminated rest at end of stream, if any.
    mutating func finish() -> String? { buffer.isEmpty ? nil : take() }

    private mutating func take() -> String {
        if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
        defer { buffer.removeAll(keepingCapacity: true) }
        return String(decoding: buffer, as: UTF8.self)
    }
}
