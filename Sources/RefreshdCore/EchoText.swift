/// Makes text from outside (a job file, a job's output or results, a client) safe to show
/// inside one line: an error message, a log line, a watcher's terminal.
///
/// Values are echoed so the reader sees what was found, but a value may hold line breaks,
/// terminal escape sequences or NUL: printed raw, they would split one error or one log event
/// over several lines (forging the lines after it) or drive the terminal. Control characters
/// become Swift-style escapes (`\n`, `\t`, `\0`, `\u{1B}`), as do the invisible characters
/// that reorder or break lines (U+2028, bidi overrides); long values are cut with `…`. Invalid UTF-8 never gets here: Swift strings
/// are valid Unicode (a decoder replaced bad bytes with U+FFFD). A backslash is left alone, so
/// escaping is idempotent: text escaped twice reads as text escaped once.
///
/// The one escaping function: `check` uses it for echoed values (the config module adds its
/// default length), the runtime for observation messages, the log handler for whole lines.
package enum EchoText {
    /// `"text"`, escaped and cut to `limit` scalars.
    package static func quoted(_ text: String, limit: Int) -> String {
        "\"" + escaped(text, limit: limit) + "\""
    }

    /// The text with control characters escaped, cut after `limit` scalars (nil: never cut).
    package static func escaped(_ text: String, limit: Int?) -> String {
        if text.utf8.count <= (limit ?? Int.max), isClean(text) { return text }
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if let limit, count >= limit {
                result += "…"
                break
            }
            count += 1
            appendEscaped(scalar, to: &result)
        }
        return result
    }

    /// True when `text` has nothing to escape (checked on UTF-8 bytes, the common fast path).
    package static func isClean(_ text: String) -> Bool {
        var ascii = true
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F { return false }
            if byte >= 0x80 { ascii = false }
        }
        return ascii || !text.unicodeScalars.contains(where: needsEscape)
    }

    /// Control characters (C0, DEL, C1), line and paragraph separators, bidi controls, BOM.
    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
            return true
        default:
            return false
        }
    }

    private static func appendEscaped(_ scalar: Unicode.Scalar, to result: inout String) {
        guard needsEscape(scalar) else {
            result.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\0": result += "\\0"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }
}
