import Foundation
import RefreshdCore
import RefreshdRuntime

/// Structure-aware generator of results-channel lines (fd 3), seeded: valid lines built from
/// the shipped examples (Scripts/dayparts-provider, Scripts/download-pack) and the ResultLine
/// grammar, then mutated one to three times (a value of another type, a key removed or added,
/// a date broken in one field or written in another zone form, control characters, terminal
/// escapes and line separators in strings, extreme numbers, and raw text cuts and byte flips).
struct ResultsChannelFuzz {
    /// A JSON value kept as a tree, so mutations stay structural; `raw` is text put as is.
    indirect enum Value {
        case object([(String, Value)]), array([Value]), string(String), number(String), bool(Bool), null, raw(String)

        var text: String {
            switch self {
            case let .object(pairs): "{" + pairs.map { Self.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
            case let .array(items): "[" + items.map(\.text).joined(separator: ",") + "]"
            case let .string(s): Self.quote(s)
            case let .number(n): n
            case let .bool(b): b ? "true" : "false"
            case .null: "null"
            case let .raw(r): r
            }
        }

        static func quote(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
    }

    var random: SplitMix64
    /// The widget kind the end-to-end test declares, so reloads reach a provider.
    var widgetKind = "fuzzwidget"

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    // MARK: Dates

    /// A date in one of the forms ISO 8601 allows, or broken in one field; `valid` says which.
    mutating func date() -> (text: String, valid: Bool) {
        var year = random.int(1970...2100), month = random.int(1...12)
        var day = random.int(1...28), hour = random.int(0...23), minute = random.int(0...59), second = random.int(0...59)
        var valid = true
        var yearText: String?
        var zone = random.pick(["Z", "z", "+01:00", "-05:30", "+0100", "+01", "-00:00", "+14:00", "-12"])
        var fraction = random.chance(0.3) ? "." + String(random.int(0...999_999)) : ""
        switch random.int(0...14) {
        case 0: month = random.pick([0, 13, 99]); valid = false
        case 1: day = random.pick([0, 32]); valid = false
        case 2: month = 2; day = 30; valid = false
        case 3: month = 2; day = 29; valid = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        case 4: hour = random.pick([24, 25, 99]); valid = false
        case 5: minute = 60; valid = false
        case 6: second = 60; valid = false; fraction = ""
        case 7: yearText = random.pick(["0000", "-5952", "+12026", "10000", "99"]); valid = false
        case 8: zone = random.pick(["", "+24:00", "+01:60", "+1", "UTC", " Z", "Zjunk"]); valid = false
        case 9: fraction = random.pick([".", ".1234567890", ",5"]); valid = fraction == ",5"
        case 10: year = random.pick([1, 9999]); valid = true
            // The offset must not take it outside years 1-9999 in UTC.
            zone = "Z"
        default: break
        }
        let pad = { (v: Int, w: Int) in String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
        let y = yearText ?? pad(year, 4)
        let separator = random.chance(0.1) ? "t" : "T"
        // Seconds may be left out (ISO 8601 allows hh:mm), unless they are what is broken.
        let seconds = random.chance(0.1) && fraction.isEmpty && second < 60 ? "" : ":" + pad(second, 2)
        return ("\(y)-\(pad(month, 2))-\(pad(day, 2))\(separator)\(pad(hour, 2)):\(pad(minute, 2))\(seconds)\(fraction)\(zone)", valid)
    }

    // MARK: Lines

    /// A valid line from the shipped examples or the grammar.
    mutating func validLine() -> Value {
        func date() -> Value {
            var d = self.date()
            while !d.valid { d = self.date() }
            return .string(d.text)
        }
        let id = random.pick(["pack-autumn", "p-1", "a.b_c-d"])
        switch random.int(0...6) {
        case 0, 1:  // Scripts/dayparts-provider
            let entries: [Value] = (0..<random.int(1...8)).map { index in
                var fields: [(String, Value)] = [("date", date()), ("content", .object([
                    ("asset", .string("dawn-2026-11-22")), ("family", .string("systemSmall"))]))]
                if random.chance(0.3) { fields.append(("relevance", .number("0.5"))) }
                if random.chance(0.3) { fields.append(("duration", .number(String(random.int(0...86_400))))) }
                return .object(fields)
            }
            let policy: Value = random.chance(0.3) ? .object([("after", date())]) : .string(random.pick(["atEnd", "never"]))
            return .object([("entries", .array(entries)), ("policy", policy), ("upstreamFetch", .bool(random.chance(0.5)))])
        case 2:  // Scripts/download-pack
            return .object([("activity", .string("start")), ("id", .string(id)), ("type", .string("WallpaperPack")),
                            ("attributes", .object([("pack", .string("autumn"))])),
                            ("content", .object([("progress", .number("0"))])), ("staleDate", date()),
                            ("relevance", .number("1")), ("startAt", date()), ("frequentUpdates", .bool(true))])
        case 3:
            return .object([("activity", .string("update")), ("id", .string(id)),
                            ("content", .object([("progress", .number("0.3"))])), ("timestamp", date()),
                            ("staleDate", date()), ("priority", .string(random.pick(["high", "low"])))])
        case 4:
            let dismissal: Value = random.chance(0.5) ? .string(random.pick(["default", "immediate"])) : .object([("after", date())])
            return .object([("activity", .string("end")), ("id", .string(id)),
                            ("content", .object([("progress", .number("1")), ("files", .number("12"))])),
                            ("dismissal", dismissal), ("timestamp", date())])
        case 5:
            return .object([("reloadTimelines", .string(random.chance(0.7) ? widgetKind : "wallpaper"))])
        default:
            return .object([("reloadAllTimelines", .bool(true))])
        }
    }

    static let grammarKeys = ["entries", "date", "content", "relevance", "duration", "policy", "after", "upstreamFetch",
                              "reloadTimelines", "reloadAllTimelines", "activity", "id", "type", "attributes",
                              "staleDate", "startAt", "timestamp", "priority", "dismissal", "frequentUpdates"]
    static let hostile = ["\n", "\r", "\u{1B}[2J", "\u{1B}]0;title\u{7}", "\u{0}", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}",
                          "\u{202E}", "\u{2066}", "\u{FEFF}", "\n2001-01-01T00:00:00.000Z FORGED", "../../etc", "\u{FFFD}"]

    /// A random value of any JSON type.
    mutating func anyValue(depth: Int = 0) -> Value {
        switch random.int(0...(depth > 2 ? 4 : 6)) {
        case 0: return .string(random.pick(Self.hostile) + random.pick(["x", "", "pack-autumn", widgetKind]))
        case 1: return .number(random.pick(["0", "-1", "1e308", "-1e308", "1e-320", "9223372036854775808", "0.5", "3.2e9", "-0"]))
        case 2: return .bool(random.chance(0.5))
        case 3: return .null
        case 4: return .string(date().text)
        case 5: return .array((0..<random.int(0...3)).map { _ in anyValue(depth: depth + 1) })
        default: return .object((0..<random.int(0...3)).map { _ in (random.pick(Self.grammarKeys), anyValue(depth: depth + 1)) })
        }
    }

    /// One structural mutation somewhere in the tree.
    mutating func mutate(_ value: Value, depth: Int = 0) -> Value {
        switch value {
        case var .object(pairs) where !pairs.isEmpty && random.chance(0.6):
            let index = random.int(0...(pairs.count - 1))
            switch random.int(0...5) {
            case 0: pairs.remove(at: index)
            case 1: pairs.append((random.pick(Self.grammarKeys), anyValue()))
            case 2: pairs[index].1 = anyValue()
            case 3: pairs.append(pairs[index])  // a duplicate key
            default: pairs[index].1 = mutate(pairs[index].1, depth: depth + 1)
            }
            return .object(pairs)
        case var .array(items) where !items.isEmpty && random.chance(0.6):
            let index = random.int(0...(items.count - 1))
            if random.chance(0.2) { items.append(contentsOf: Array(repeating: items[index], count: random.int(1...40))) }
            else { items[index] = mutate(items[index], depth: depth + 1) }
            return .array(items)
        case let .string(s):
            if random.chance(0.5) {
                let d = date()
                return .string(d.text)
            }
            var scalars = Array(s.unicodeScalars)
            let at = scalars.isEmpty ? 0 : random.int(0...scalars.count)
            scalars.insert(contentsOf: random.pick(Self.hostile).unicodeScalars, at: at)
            var out = ""
            out.unicodeScalars.append(contentsOf: scalars)
            return .string(out)
        default:
            return anyValue()
        }
    }

    /// A line for fd 3, as bytes (maybe not UTF-8): a valid line mutated 0 to 3 times,
    /// sometimes cut or flipped as text. Never a newline byte: the channel splits on it.
    mutating func line() -> [UInt8] {
        var value = validLine()
        for _ in 0..<random.int(0...3) { value = mutate(value) }
        var bytes = Array(value.text.utf8)
        switch random.int(0...19) {
        case 0 where !bytes.isEmpty: bytes.removeLast(random.int(1...bytes.count))
        case 1 where !bytes.isEmpty: bytes[random.int(0...(bytes.count - 1))] ^= UInt8(1 << random.int(0...7))
        case 2: bytes += Array(" trailing".utf8)
        case 3 where !bytes.isEmpty: bytes.insert(random.pick([0xFF, 0xC3, 0x80, 0x0D, 0x1B]), at: random.int(0...(bytes.count - 1)))
        default: break
        }
        return bytes.filter { $0 != 0x0A }
    }
}
