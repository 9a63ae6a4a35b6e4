/// Levenshtein distance over Unicode scalars (insertions, deletions, substitutions): how the
/// "did you mean" of a misspelt setting, identifier or time zone finds the name meant.
package enum EditDistance {
    /// The distance of `a` and `b`, or `limit + 1` once it is certainly over `limit`.
    package static func between(_ a: String, _ b: String, limit: Int = .max) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        let over = limit == .max ? limit : limit + 1
        if abs(a.count - b.count) > limit { return over }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            var best = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
                best = min(best, row[j])
            }
            if best > limit { return over }
        }
        return min(row[b.count], over)
    }
}
