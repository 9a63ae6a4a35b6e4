/// The little JSON the activity machine needs, without Foundation: checking that attributes and
/// content are JSON objects, reading the content's top-level `progress`, and recording an owner's
/// failure in the final content.
///
/// A failure is merged as a top-level member
/// `"failure": {"outcome": "expired", "reason": "allowance used up"}` (replacing an existing
/// `failure` member), so widgets keep reading the content's other fields. Content that is not a
/// JSON object (only restored or hand-made records can hold such) is wrapped instead:
/// `{"failure": {...}, "content": <the old text as a JSON string>}`.
package enum ActivityJSON {
    /// Nil when `text` is one JSON object (and nothing else but whitespace); otherwise what is
    /// wrong, e.g. `expected a JSON object, found "["`.
    package static func objectError(_ text: String) -> String? {
        var scanner = Scanner(Array(text.utf8))
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else {
            return scanner.atEnd ? "expected a JSON object, found nothing" : "expected a JSON object, found \(scanner.found)"
        }
        do {
            _ = try scanner.object(depth: 0, collect: false)
            scanner.skipSpace()
            if !scanner.atEnd { return "expected the end of the JSON object at byte \(scanner.index), found \(scanner.found)" }
            return nil
        } catch {
            return error.message
        }
    }

    /// The content's top-level `progress` number as a percentage: a fraction 0...1 (like
    /// `Progress.fractionCompleted`) shown ×100, clamped to 0...100. Nil when there is none.
    package static func progressPercent(in content: String) -> Double? {
        guard let members = members(of: content), let member = members.first(where: { $0.key == "progress" }) else { return nil }
        guard let value = Double(member.valueText) else { return nil }
        guard value.isFinite else { return nil }
        return min(100, max(0, value * 100))
    }

    /// `content` with the owner's failure recorded (see the type's doc).
    package static func mergingFailure(into content: String, outcome: Outcome, reason: String?) -> String {
        var failure = "{\"outcome\":\(quoted(outcome.rawValue))"
        if let reason { failure += ",\"reason\":\(quoted(String(reason.prefix(200))))" }
        failure += "}"
        guard let members = members(of: content) else {
            return "{\"failure\":\(failure),\"content\":\(quoted(content))}"
        }
        var parts = members.filter { $0.key != "failure" }.map { "\(quoted($0.key)):\($0.valueText)" }
        parts.append("\"failure\":\(failure)")
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// `text` as a JSON string literal.
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A top-level member: its decoded key and its value's exact text.
    struct Member {
        var key: String
        var valueText: String
    }

    /// The top-level members of a JSON object, or nil when `text` is not one.
    static func members(of text: String) -> [Member]? {
        let bytes = Array(text.utf8)
        var scanner = Scanner(bytes)
        scanner.skipSpace()
        guard let members = try? scanner.object(depth: 0, collect: true) else { return nil }
        scanner.skipSpace()
        guard scanner.atEnd else { return nil }
        return members.map { Member(key: $0.key, valueText: String(decoding: bytes[$0.value], as: UTF8.self)) }
    }

    struct ScanError: Error {
        var message: String
    }

    /// A validating recursive-descent scanner over UTF-8 bytes, nesting bounded by `maxDepth`.
    struct Scanner {
        static let maxDepth = 64
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
        var found: String {
            guard let byte = peek else { return "the end" }
            return byte >= 0x20 && byte < 0x7f ? "\"\(Character(Unicode.Scalar(byte)))\" at byte \(index)" : "byte 0x\(String(byte, radix: 16)) at byte \(index)"
        }

        mutating func skipSpace() {
            while let b = peek, b == 0x20 || b == 0x0a || b == 0x0d || b == 0x09 { index += 1 }
        }

        func fail(_ expected: String) -> ScanError {
            ScanError(message: "expected \(expected), found \(found)")
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(ScanError) {
            guard peek == byte else { throw fail(what) }
            index += 1
        }

        /// Parses an object at `index`; with `collect`, returns its members (key, value range).
        mutating func object(depth: Int, collect: Bool) throws(ScanError) -> [(key: String, value: Range<Int>)] {
            guard depth < Scanner.maxDepth else { throw ScanError(message: "expected at most \(Scanner.maxDepth) levels of nesting") }
            try expect(UInt8(ascii: "{"), "\"{\"")
            var members: [(key: String, value: Range<Int>)] = []
            skipSpace()
            if peek == UInt8(ascii: "}") { index += 1; return members }
            while true {
                skipSpace()
                let keyStart = index
                try string()
                let key = collect ? Scanner.decodeString(bytes[(keyStart + 1)..<(index - 1)]) : ""
                skipSpace()
                try expect(UInt8(ascii: ":"), "\":\" after an object key")
                skipSpace()
                let valueStart = index
                try value(depth: depth + 1)
                if collect { members.append((key, valueStart..<index)) }
                skipSpace()
                if peek == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "\",\" or \"}\" in an object")
                return members
            }
        }

        mutating func value(depth: Int) throws(ScanError) {
            switch peek {
            case UInt8(ascii: "{"): _ = try object(depth: depth, collect: false)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        mutating func array(depth: Int) throws(ScanError) {
            guard depth < Scanner.maxDepth else { throw ScanError(message: "expected at most \(Scanner.maxDepth) levels of nesting") }
            index += 1
            skipSpace()
            if peek == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                if peek == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"), "\",\" or \"]\" in an array")
                return
            }
        }

        mutating func literal(_ word: String) throws(ScanError) {
            for byte in word.utf8 {
                guard peek == byte else { throw fail("\(word)") }
                index += 1
            }
        }

        mutating func number() throws(ScanError) {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, isDigit(first) else {
                index = start
                throw fail("a JSON value")
            }
            index += 1
            if first != UInt8(ascii: "0") { while let b = peek, isDigit(b) { index += 1 } }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard let b = peek, isDigit(b) else { throw fail("a digit after \".\"") }
                while let b = peek, isDigit(b) { index += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard let b = peek, isDigit(b) else { throw fail("a digit in an exponent") }
                while let b = peek, isDigit(b) { index += 1 }
            }
        }

        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

        mutating func string() throws(ScanError) {
            try expect(UInt8(ascii: "\""), "a string")
            while let b = peek {
                index += 1
                switch b {
                case UInt8(ascii: "\""):
                    return
                case UInt8(ascii: "\\"):
                    guard let e = peek else { throw fail("an escape") }
                    index += 1
                    if e == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            guard let h = peek, isHex(h) else { throw fail("4 hex digits after \\u") }
                            index += 1
                        }
                    } else if !"\"\\/bfnrt".utf8.contains(e) {
                        index -= 1
                        throw fail("a valid escape")
                    }
                case 0..<0x20:
                    index -= 1
                    throw fail("no control character inside a string")
                default:
                    continue
                }
            }
            throw fail("the closing quote of a string")
        }

        func isHex(_ b: UInt8) -> Bool {
            isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
        }

        /// The decoded text of a validated string's body (escapes resolved; lone surrogates
        /// become U+FFFD).
        static func decodeString(_ body: ArraySlice<UInt8>) -> String {
            guard body.contains(UInt8(ascii: "\\")) else { return String(decoding: body, as: UTF8.self) }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            var i = body.startIndex
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            func hex4(_ at: Int) -> UInt32 {
                var v: UInt32 = 0
                for k in at..<(at + 4) {
                    let b = body[k]
                    v = v << 4 | UInt32(b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x61 + 10)
                }
                return v
            }
            while i < body.endIndex {
                let b = body[i]
                guard b == UInt8(ascii: "\\") else { raw.append(b); i += 1; continue }
                flush()
                let e = body[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{c}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var v = hex4(i)
                    i += 4
                    if v >= 0xD800 && v < 0xDC00, i + 6 <= body.endIndex, body[i] == UInt8(ascii: "\\"), body[i + 1] == UInt8(ascii: "u") {
                        let low = hex4(i + 2)
                        if low >= 0xDC00 && low < 0xE000 {
                            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                            i += 6
                        }
                    }
                    scalars.append(Unicode.Scalar(v) ?? "\u{FFFD}")
                default: scalars.append(Unicode.Scalar(e))
                }
            }
            flush()
            return String(scalars)
        }
    }
}
