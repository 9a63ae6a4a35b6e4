/// A cursor over an expression's Unicode scalars that reports errors with 1-based columns.
struct ExpressionScanner {
    let scalars: [Unicode.Scalar]
    var index: Int
    /// Index one past the last scalar this scanner may read (a zone suffix is cut off this way).
    var end: Int

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        index = 0
        end = scalars.count
    }

    var atEnd: Bool { index >= end }
    var current: Unicode.Scalar? { index < end ? scalars[index] : nil }

    func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < end ? scalars[index + offset] : nil
    }

    func text(_ range: Range<Int>) -> String {
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars[range.clamped(to: 0..<end)])
        return String(s)
    }

    /// Consumes `literal` case-insensitively (ASCII) if the input continues with it.
    mutating func consume(caseInsensitive literal: String) -> Bool {
        let wanted = Array(literal.lowercased().unicodeScalars)
        guard index + wanted.count <= end else { return false }
        for (offset, scalar) in wanted.enumerated()
        where Character(scalars[index + offset]).lowercased() != String(scalar) {
            return false
        }
        index += wanted.count
        return true
    }

    mutating func skipSpaces() {
        while current == " " { index += 1 }
    }

    /// Consumes a run of ASCII digits, returning its value (nil if none or absurdly long).
    mutating func digits() -> (value: Int?, range: Range<Int>) {
        let start = index
        while let c = current, ("0"..."9").contains(c) { index += 1 }
        let text = text(start..<index)
        return (text.isEmpty || text.count > 12 ? nil : Int(text), start..<index)
    }

    /// An error at `position`; `found` defaults to the token starting there.
    func error(_ expected: String, at position: Int? = nil, found: String? = nil, hint: String? = nil) -> CalendarParseError {
        let at = position ?? index
        return CalendarParseError(column: at + 1, expected: expected, found: found ?? token(at: at), hint: hint)
    }

    /// The text from `position` up to the next space (at least one character), or nil at the end.
    func token(at position: Int) -> String? {
        guard position < scalars.count else { return nil }
        var stop = position + 1
        while stop < scalars.count && scalars[stop] != " " { stop += 1 }
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars[position..<stop])
        return String(s)
    }
}
