/// A job file's text, for placing errors precisely: byte offsets and characters of a scalar's
/// value mapped back to the line and column where they are written.
///
/// Only error paths use it, so it does its work on demand and costs nothing for valid files.
struct SourceText {
    let text: String

    /// `text` without a leading byte-order mark (U+FEFF), which YAML allows at the start.
    static func withoutByteOrderMark(_ text: String) -> String {
        text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// The line and column (in Unicode scalars) of a UTF-8 byte offset.
    static func location(ofUTF8Offset offset: Int, in text: String) -> Location {
        var line = 1, column = 1, bytes = 0
        for scalar in text.unicodeScalars {
            if bytes >= offset { break }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            bytes += UTF8.width(scalar)
        }
        return Location(line: line, column: column)
    }

    /// The offset of the first byte that is not part of valid UTF-8, or nil when all are.
    static func firstInvalidUTF8(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int, minimum: UInt32
            var value: UInt32
            switch lead {
            case 0xC2...0xDF: length = 2; minimum = 0x80; value = UInt32(lead & 0x1F)
            case 0xE0...0xEF: length = 3; minimum = 0x800; value = UInt32(lead & 0x0F)
            case 0xF0...0xF4: length = 4; minimum = 0x10000; value = UInt32(lead & 0x07)
            default: return index
            }
            for next in 1..<length {
                guard index + next < count, bytes[index + next] & 0xC0 == 0x80 else { return index }
                value = value << 6 | UInt32(bytes[index + next] & 0x3F)
            }
            if value < minimum || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { return index }
            index += length
        }
        return nil
    }

    /// The line and column of the first invalid byte, with the valid text before it decoded
    /// (so columns count scalars, as everywhere else).
    static func location(ofInvalidByteAt offset: Int, in bytes: UnsafeRawBufferPointer) -> Location {
        let prefix = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<offset]), as: UTF8.self)
        return location(ofUTF8Offset: offset, in: prefix)
    }

    /// Where the `column`-th character (1-based) of a scalar's value is written, the scalar's
    /// node being at `start` (its first character, or its tag or anchor).
    ///
    /// Walks the source from the node and the value side by side: quotes, escapes (`\t`, `''`),
    /// folded line breaks, indentation and block-scalar headers are stepped over, so a value
    /// written over several lines is placed on the line where the character really is.
    func location(ofTextColumn column: Int, in scalar: YAMLNode.Scalar, at start: Location) -> Location {
        guard column > 1 else { return column == 1 ? firstCharacter(of: scalar, at: start) : start }
        var cursor = Cursor(source: Array(text.unicodeScalars), start: start)
        if cursor.current == "*" { return start }  // an alias: its text is written elsewhere
        cursor.skipProperties()
        switch scalar.style {
        case .singleQuoted, .doubleQuoted: cursor.advance()
        case .literal, .folded: cursor.skipLine()
        case .plain: break
        }
        let value = Array(scalar.string.unicodeScalars)
        var consumed = 0
        while consumed < column - 1, consumed < value.count, let s = cursor.current {
            let t = value[consumed]
            if scalar.style == .doubleQuoted, s == "\\", let next = cursor.peek(1) {
                if next == "\n" || next == "\r" {
                    cursor.advance(); cursor.skipLineBreakAndIndentation()
                    continue
                }
                let width = next == "x" ? 4 : next == "u" ? 6 : next == "U" ? 10 : 2
                for _ in 0..<width { cursor.advance() }
                consumed += 1
                continue
            }
            if scalar.style == .singleQuoted, s == "'", cursor.peek(1) == "'" {
                cursor.advance(); cursor.advance(); consumed += 1
                continue
            }
            if s == t || (s == "\n" && t == " ") {
                cursor.advance(); consumed += 1
                continue
            }
            if s == " " || s == "\t" || s == "\r" || s == "\n" {
                cursor.advance()
                continue
            }
            break
        }
        cursor.skipBlanks()
        return cursor.location
    }

    /// Where a scalar's value begins: after its tag, anchor and opening quote.
    private func firstCharacter(of scalar: YAMLNode.Scalar, at start: Location) -> Location {
        var cursor = Cursor(source: Array(text.unicodeScalars), start: start)
        if cursor.current == "*" { return start }  // an alias: its text is written elsewhere
        cursor.skipProperties()
        switch scalar.style {
        case .singleQuoted, .doubleQuoted: cursor.advance()
        case .literal, .folded: cursor.skipLine(); cursor.skipBlanks()
        case .plain: break
        }
        return cursor.location
    }

    /// A position in the source that knows its line and column.
    private struct Cursor {
        let source: [Unicode.Scalar]
        var index = 0
        var location = Location.start

        init(source: [Unicode.Scalar], start: Location) {
            self.source = source
            while index < source.count, location.line < start.line { advance() }
            while index < source.count, location.column < start.column, source[index] != "\n" { advance() }
        }

        var current: Unicode.Scalar? { index < source.count ? source[index] : nil }

        func peek(_ offset: Int) -> Unicode.Scalar? {
            index + offset < source.count ? source[index + offset] : nil
        }

        mutating func advance() {
            guard index < source.count else { return }
            if source[index] == "\n" {
                location.line += 1
                location.column = 1
            } else {
                location.column += 1
            }
            index += 1
        }

        /// Steps over `&anchor` and `!tag` properties and the blanks after them.
        mutating func skipProperties() {
            while let c = current, c == "&" || c == "!" {
                while let c = current, c != " ", c != "\t", c != "\n" { advance() }
                skipBlanks()
            }
        }

        mutating func skipBlanks() {
            while let c = current, c == " " || c == "\t" { advance() }
        }

        /// Moves to the start of the next line.
        mutating func skipLine() {
            while let c = current, c != "\n" { advance() }
            advance()
        }

        mutating func skipLineBreakAndIndentation() {
            if current == "\r" { advance() }
            if current == "\n" { advance() }
            while let c = current, c == " " || c == "\t" { advance() }
        }
    }
}
