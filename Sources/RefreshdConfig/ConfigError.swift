/// One problem in a job file, located at the file, line and column where it was found.
///
/// Every message says what was found and what was expected, so that
/// `Jobs/bad.yaml:4:12: allowance: expected a duration like 30s, 10m or 1h30m, found "thirty"`
/// is enough to fix the file without reading the loader's source. Lines and columns are 1-based;
/// columns count Unicode scalars, as libYAML does.
package struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible, Comparable {
    /// The job file's path as given to (or joined by) the loader.
    package var file: String
    /// 1-based line.
    package var line: Int
    /// 1-based column, in Unicode scalars.
    package var column: Int
    /// What was found and what was expected, without the location prefix.
    package var message: String

    package init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        // One line, whatever the message echoes: control characters become escapes.
        self.message = EchoText.escaped(message, limit: nil)
    }

    /// `file:line:column: message`, the format editors and compilers use, on one line (control
    /// characters in the file name or message are shown as escapes such as `\n`).
    package var description: String {
        "\(EchoText.escaped(file, limit: nil)):\(line):\(column): \(EchoText.escaped(message, limit: nil))"
    }

    /// Orders by file, then line, then column, then message.
    package static func < (lhs: ConfigError, rhs: ConfigError) -> Bool {
        (lhs.file, lhs.line, lhs.column, lhs.message) < (rhs.file, rhs.line, rhs.column, rhs.message)
    }
}

/// All the problems found while loading job files, sorted by file then line.
///
/// The loader collects every error of every file instead of stopping at the first one, so a
/// single run of `refreshd check` shows everything there is to fix.
package struct ConfigErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// The errors, sorted by file, line and column.
    package var errors: [ConfigError]

    package init(_ errors: [ConfigError]) {
        self.errors = errors.sorted()
    }

    /// One error per line.
    package var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}

/// Gathers errors for one file while its settings are read.
struct ErrorSink {
    let file: String
    private(set) var errors: [ConfigError] = []
    /// Keys already suggested for a misspelling (`retry.limit`), whose "missing" error would only repeat it.
    var suggestedKeys: Set<String> = []

    init(file: String) { self.file = file }

    mutating func add(_ line: Int, _ column: Int, _ message: String) {
        errors.append(ConfigError(file: file, line: line, column: column, message: message))
    }

    mutating func add(at location: Location, _ message: String) {
        add(location.line, location.column, message)
    }

    /// Takes in the errors another sink gathered (for a part of the file read on its own).
    mutating func append(contentsOf other: ErrorSink) {
        errors += other.errors
    }
}

/// A 1-based line and column in a job file.
struct Location: Sendable, Hashable {
    var line: Int
    var column: Int

    static let start = Location(line: 1, column: 1)
}

/// An unlocated problem description, located later by whoever knows the node it came from.
struct Problem: Error, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    var description: String
    /// 1-based column within the value's text where the problem is, when known more precisely
    /// than "the value" (a calendar expression's offending field).
    var column: Int?

    init(_ description: String, column: Int? = nil) {
        self.description = description
        self.column = column
    }

    init(stringLiteral value: String) { self.description = value }
}
