/// HTML text that is safe to send: the only way to put a value into it is string
/// interpolation, which escapes every value (`&`, `<`, `>`, `"`, `'`) unless the value is HTML
/// itself. The literal parts of a template are the programmer's and go in as written.
///
/// Why a typed builder and not swift-mustache: the templates are checked by the compiler with
/// the values' types, nothing is shipped as resource files beside the binary, and escaping
/// cannot be forgotten by writing `{{{ }}}` in the wrong place: forgetting it does not compile.
package struct HTML: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    package private(set) var text: String

    package init(stringLiteral value: String) { text = value }
    package init(stringInterpolation: Interpolation) { text = stringInterpolation.text }
    /// Text from outside, escaped.
    package init(escaping value: String) { text = HTML.escape(value) }
    private init(trusted: String) { text = trusted }

    /// A picture `SimulationPicture` drew, put in the page as it is: its renderer escapes every
    /// text it puts in (job names, fault details). Anything but an `<svg` element is escaped.
    package init(picture svg: String) { text = svg.hasPrefix("<svg ") ? svg : HTML.escape(svg) }

    package var description: String { text }

    package struct Interpolation: StringInterpolationProtocol {
        var text = ""
        package init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity * 2) }
        package mutating func appendLiteral(_ literal: String) { text += literal }
        package mutating func appendInterpolation(_ html: HTML) { text += html.text }
        package mutating func appendInterpolation(_ list: [HTML]) { for h in list { text += h.text } }
        package mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }
        package mutating func appendInterpolation(_ value: Substring) { text += HTML.escape(String(value)) }
        package mutating func appendInterpolation(_ value: Int) { text += String(value) }
        package mutating func appendInterpolation(_ value: Int64) { text += String(value) }
        package mutating func appendInterpolation<T: CustomStringConvertible>(_ value: T) { text += HTML.escape(value.description) }
        package mutating func appendInterpolation(_ value: String?) { text += HTML.escape(value ?? "") }
    }

    /// Joins pieces of HTML.
    package static func join(_ parts: [HTML], separator: HTML = "") -> HTML {
        HTML(trusted: parts.map(\.text).joined(separator: separator.text))
    }

    /// Text with `&<>"'` replaced by entities and control characters (other than tab and line
    /// breaks) by spaces: fit for element text and quoted attribute values.
    package static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { out += " " } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// One URL path segment, percent-encoded (every byte but unreserved characters), so an
    /// identifier with `/`, `?` or `#` in it stays one segment of a link.
    package static func segment(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    package func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
