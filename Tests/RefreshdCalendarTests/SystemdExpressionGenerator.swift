import RefreshdCore
/// Generates systemd calendar expressions from a seeded PRNG for the comparison against
/// `systemd-analyze calendar`. Values are biased towards DST hours (1-3), month ends and
/// February; about one in twenty expressions has an out-of-range value, to compare validity.
struct SystemdExpressionGenerator {
    var random: SplitMix64

    static let shorthands = ["minutely", "hourly", "daily", "weekly", "monthly", "yearly",
                             "annually", "quarterly", "semiannually", "Daily"]
    static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longWeekdays = ["Monday", "tuesday", "Wednesday", "thursday", "Friday", "saturday", "SUNDAY"]
    static let zones = ["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe"]

    mutating func expression() -> String {
        if random.chance(0.08) {
            return random.pick(Self.shorthands) + (random.chance(0.3) ? " " + random.pick(Self.zones) : "")
        }
        var parts: [String] = []
        if random.chance(0.25) { parts.append(weekdays()) }
        if random.chance(0.7) { parts.append(date()) }
        if parts.isEmpty || random.chance(0.85) { parts.append(time()) }
        if random.chance(0.1) { parts.append(random.pick(Self.zones)) }
        return parts.joined(separator: " ")
    }

    private mutating func weekdays() -> String {
        (0..<random.int(1...2)).map { _ -> String in
            let a = random.int(0...6)
            let name = random.chance(0.8) ? Self.weekdays[a] : Self.longWeekdays[a]
            guard random.chance(0.4), a < 6 else { return name }
            return name + ".." + Self.weekdays[random.int(a + 1...6)]
        }.joined(separator: ",")
    }

    private mutating func date() -> String {
        let year = random.chance(0.15) ? chain(2025...2030, interesting: [2026, 2028], width: 4) + "-" : ""
        let month = random.chance(0.5) ? "*" : chain(1...12, interesting: [2, 3, 4, 10, 11], width: 2)
        if random.chance(0.15) {
            return year + month + "~" + chain(1...7, interesting: [1, 2, 3], width: 2, star: false)
        }
        let day = random.chance(0.5) ? "*" : chain(1...31, interesting: [1, 5, 8, 28, 29, 30, 31], width: 2)
        return year + month + "-" + day
    }

    private mutating func time() -> String {
        let hour = chain(0...23, interesting: [0, 1, 2, 3, 23], width: 2)
        let minute = chain(0...59, interesting: [0, 15, 30, 45, 59], width: 2)
        guard random.chance(0.35) else { return hour + ":" + minute }
        return hour + ":" + minute + ":" + chain(0...59, interesting: [0, 30, 59], width: 2)
    }

    /// `*`, or 1-3 of: value, `a..b`, `a/r`, `a..b/r`; occasionally one value out of range.
    private mutating func chain(_ range: ClosedRange<Int>, interesting: [Int], width: Int,
                                star: Bool = true) -> String {
        if star && random.chance(0.3) { return "*" }
        return (0..<random.int(1...3)).map { _ -> String in
            func value() -> Int {
                if random.chance(0.02) { return range.upperBound + 1 }
                return random.chance(0.5) ? random.pick(interesting) : random.int(range)
            }
            func text(_ v: Int) -> String {
                let s = String(v)
                return String(repeating: "0", count: max(0, width - s.count)) + s
            }
            let start = value()
            switch random.int(0...5) {
            case 0: return text(start) + ".." + text(min(start + random.int(1...5), range.upperBound))
            case 1: return text(start) + "/" + String(random.int(1...max(1, (range.upperBound - range.lowerBound) / 3)))
            case 2:
                let stop = min(start + random.int(2...12), range.upperBound)
                return text(start) + ".." + text(stop) + "/" + String(random.int(1...3))
            default: return text(start)
            }
        }.joined(separator: ",")
    }
}
