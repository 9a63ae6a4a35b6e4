/// A fast reader and compact writer for the JSON of results lines, without Foundation: the hot
/// path of a job's live activity updates (about 96,000 in a simulated year of `Jobs/`), where
/// `JSONSerialization` cost about 100 µs a line.
///
/// It is a fast path, not a second definition of JSON: it reads a strict subset and answers nil
/// for anything outside it, and the caller then asks Foundation, whose decisions stay the
/// reference. Inside the subset it gives what `JSONSerialization.jsonObject` reads and what
/// `JSONSerialization.data(withJSONObject:options: [.sortedKeys, .fragmentsAllowed,
/// .withoutEscapingSlashes])` writes, byte for byte (`StrictJSONEquivalenceTests` compares both
/// on generated lines). The subset:
/// - one object spanning the whole text (Foundation ignores what follows an object; here that
///   is outside), at most 64 levels deep, no duplicate key;
/// - numbers without an exponent: integers of at most 18 digits, decimals of at most 15 digits
///   (Foundation reads both exactly as `Int64` and `Double`; longer ones go to `Decimal`);
/// - strings without raw control characters and without `\u` surrogates;
/// - for `compact`, object keys of ASCII letters only, no two equal ignoring case: Foundation
///   sorts keys with a locale-aware, case-insensitive, numeric comparison, which for such keys
///   is the order of their lowercased bytes.
package enum StrictJSON {
    /// A value read by `object(_:)`.
    package indirect enum Value: Sendable, Hashable {
        case object([Member])
        case array([Value])
        case string(String)
        case integer(Int64)
        case decimal(Double)
        case bool(Bool)
        case null
    }

    /// An object's member, in the order written.
    package struct Member: Sendable, Hashable {
        package var key: String
        package var value: Value

        package init(key: String, value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// Nesting beyond this is left to Foundation.
    static let maxDepth = 64

    /// The members of `text` when it is one JSON object of the subset, from its first byte to its
    /// last (no whitespace around); nil otherwise (ask Foundation).
    package static func object(_ text: String) -> [Member]? {
        var text = text
        return text.withUTF8 { bytes -> [Member]? in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return nil }
            var reader = Reader(bytes: bytes)
            guard case let .object(members)? = reader.value(depth: 0), reader.index == bytes.count else { return nil }
            return members
        }
    }

    /// The compact text of `value` as Foundation writes it (sorted keys, `/` unescaped); nil
    /// when an object's keys are outside the subset (ask Foundation).
    package static func compact(_ value: Value) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        guard write(value, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// A `Double` as Foundation's JSON writers print it: `description` without a trailing `.0`.
    /// Finite values only.
    package static func number(_ value: Double) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    // MARK: Writing

    private static func write(_ value: Value, into out: inout [UInt8]) -> Bool {
        switch value {
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            var order = Array(members.indices)
            if members.count > 1 {
                var lowered: [[UInt8]] = []
                lowered.reserveCapacity(members.count)
                for member in members {
                    guard let key = lowercasedLetters(member.key) else { return false }
                    lowered.append(key)
                }
                order.sort { lowered[$0].lexicographicallyPrecedes(lowered[$1]) }
                for i in 1..<order.count where lowered[order[i - 1]] == lowered[order[i]] { return false }
            } else if let member = members.first, lowercasedLetters(member.key) == nil {
                return false
            }
            for (n, i) in order.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                appendString(members[i].key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard write(members[i].value, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        case let .array(values):
            out.append(UInt8(ascii: "["))
            for (n, element) in values.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                guard write(element, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case let .string(text):
            appendString(text, to: &out)
        case let .integer(number):
            out.append(contentsOf: number.description.utf8)
        case let .decimal(number):
            out.append(contentsOf: Self.number(number).utf8)
        case let .bool(flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null:
            out.append(contentsOf: "null".utf8)
        }
        return true
    }

    /// A key's bytes lowercased when it is ASCII letters only (at least one); nil otherwise.
    private static func lowercasedLetters(_ key: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): bytes.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte | 0x20)
            default: return nil
            }
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// `text` as a JSON string the way `JSONSerialization` writes it: `"` and `\` escaped, the
    /// control characters as `\b \f \n \r \t` or `\u00xx`, everything else (`/` included) as is.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(byte)
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x08: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Lowercase, as both Foundation writers print `\u00xx`.
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    // MARK: Reading

    /// A recursive-descent reader over UTF-8 bytes; nil at the first thing outside the subset.
    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> Value? {
            guard let byte = peek else { return nil }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Value? {
            guard depth < StrictJSON.maxDepth else { return nil }
            index += 1  // {
            var members: [Member] = []
            members.reserveCapacity(8)  // one allocation for a results line's members, not four
            skipSpace()
            if peek == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                // Foundation keeps the last of equal keys (equal as Swift strings): outside.
                for member in members where member.key == key { return nil }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpace()
                guard let value = value(depth: depth + 1) else { return nil }
                members.append(Member(key: key, value: value))
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object(members)
                default: return nil
                }
            }
        }

        mutating func array(depth: Int) -> Value? {
            guard depth < StrictJSON.maxDepth else { return nil }
            index += 1  // [
            var values: [Value] = []
            skipSpace()
            if peek == UInt8(ascii: "]") { index += 1; return .array(values) }
            while true {
                skipSpace()
                guard let value = value(depth: depth + 1) else { return nil }
                values.append(value)
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(values)
                default: return nil
                }
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let start = word.utf8Start
            for k in 0..<count where bytes[index + k] != start[k] { return false }
            index += count
            return delimited
        }

        /// Whether the token just read ends where a structural character, whitespace or the end follows.
        var delimited: Bool {
            switch peek {
            case nil, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: true
            default: false
            }
        }

        mutating func number() -> Value? {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            var digits = 0
            guard let first = peek, isDigit(first) else { return nil }
            index += 1
            digits += 1
            if first != UInt8(ascii: "0") {
                while let b = peek, isDigit(b) { index += 1; digits += 1 }
            }
            var decimal = false
            if peek == UInt8(ascii: ".") {
                decimal = true
                index += 1
                guard let b = peek, isDigit(b) else { return nil }
                while let b = peek, isDigit(b) { index += 1; digits += 1 }
            }
            guard delimited else { return nil }  // an exponent, a second point, a leading zero: outside
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if decimal {
                guard digits <= 15, let value = Double(text) else { return nil }
                return .decimal(value)
            }
            guard digits <= 18, let value = Int64(text) else { return nil }
            return .integer(value)
        }

        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

        func hexValue(_ b: UInt8) -> UInt32? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(b - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(b - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(b - 0x41 + 10)
            default: nil
            }
        }

        /// A string at `index` (its opening quote), decoded.
        mutating func string() -> String? {
            index += 1  // "
            let start = index
            // The common case: no escape, a slice of the input.
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if b == UInt8(ascii: "\\") { break }
                if b < 0x20 { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).unicodeScalars)
            var run = index
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                    if run < index {
                        scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<index]), as: UTF8.self).unicodeScalars)
                    }
                    index += 1
                    if b == UInt8(ascii: "\"") { return String(scalars) }
                    guard let e = peek else { return nil }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{c}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count else { return nil }
                        var v: UInt32 = 0
                        for k in 0..<4 {
                            guard let h = hexValue(bytes[index + k]) else { return nil }
                            v = v << 4 | h
                        }
                        index += 4
                        // Surrogates (pairs, or Foundation's refusal of a lone one): outside.
                        guard let scalar = Unicode.Scalar(v) else { return nil }
                        scalars.append(scalar)
                    default:
                        return nil
                    }
                    run = index
                    continue
                }
                if b < 0x20 { return nil }
                index += 1
            }
            return nil
        }
    }
}
