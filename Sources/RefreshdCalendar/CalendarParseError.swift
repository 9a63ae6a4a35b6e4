/// Why a calendar expression was rejected, and where.
///
/// `column` is 1-based and counts characters (Unicode scalars) of the original expression,
/// so a front end can print a caret under the offending character. The description reads
/// like `column 7: expected an hour 0-23, found "25"`.
package struct CalendarParseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// 1-based column of the first offending character.
    package let column: Int
    /// What the parser would have accepted at that column, e.g. `an hour 0-23`.
    package let expected: String
    /// The offending text, or nil when the expression ended too early.
    package let found: String?
    /// What was probably meant (`did you mean Europe/Berlin?`, `for every 5 minutes write
    /// *:0/5`), or nil.
    package let hint: String?

    package init(column: Int, expected: String, found: String?, hint: String? = nil) {
        self.column = column
        self.expected = expected
        self.found = found
        self.hint = hint
    }

    /// `; ` and the hint, or empty: what follows `expected ..., found ...` in a message.
    package var hintSuffix: String { hint.map { "; \($0)" } ?? "" }

    package var description: String {
        let what = found.map { "\"\($0)\"" } ?? "end of expression"
        return "column \(column): expected \(expected), found \(what)\(hintSuffix)"
    }
}
