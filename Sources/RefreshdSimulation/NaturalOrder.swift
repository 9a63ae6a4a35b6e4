/// Orders names as a person reads them: runs of digits by their value, the rest by their UTF-8
/// bytes, so activities 1, 2, 10 list in that order (not 1, 10, 2). Locale-free, so a report is
/// the same bytes on every machine.
enum NaturalOrder {
    /// Whether `a` comes before `b`.
    static func less(_ a: String, _ b: String) -> Bool {
        var x = Array(a.utf8)[...], y = Array(b.utf8)[...]
        func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        while let c = x.first, let d = y.first {
            if isDigit(c), isDigit(d) {
                let m = x.prefix { isDigit($0) }, n = y.prefix { isDigit($0) }
                let u = m.drop { $0 == 48 }, v = n.drop { $0 == 48 }
                if u.count != v.count { return u.count < v.count }
                if !u.elementsEqual(v) { return u.lexicographicallyPrecedes(v) }
                if m.count != n.count { return m.count < n.count }  // 2 before 02: a total order
                x = x.dropFirst(m.count)
                y = y.dropFirst(n.count)
            } else {
                if c != d { return c < d }
                x = x.dropFirst()
                y = y.dropFirst()
            }
        }
        return x.isEmpty && !y.isEmpty
    }
}
