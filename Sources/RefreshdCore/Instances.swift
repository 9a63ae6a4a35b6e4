import Foundation

/// Templates and their instances (issue 23): one job file (`template: true`, `parameters:`),
/// many instances `identifier[key]`, each with its parameter values and its own request, retry
/// streak and history, sharing the template's definition.

/// What a template adds to a job: its parameter names, in the order the job file lists them,
/// how an instance's first request is made (the job's `earliest:`), and which parameters are
/// filled into file system paths (`stage-playlist`'s `library` and `folder`).
package struct TemplateSpec: Sendable, Hashable {
    package var parameters: [String]
    package var firstRequest: FirstRequest
    /// The parameters a path holds: their values must keep the path inside its folder
    /// (`InstanceName.pathValueProblem`), checked when an instance is added and at each launch.
    package var pathParameters: [String]
    /// A timeline template's widget, its kind a pattern (`wallpaper.{user}`): each instance has a
    /// widget of its own (`InstanceKind`), declared at its add; its instances get no requests of
    /// their own, only their widget's provider runs (`T[K]#family`).
    package var widget: WidgetSpec?
    /// A staging template's `stage-playlist.widget` when it holds placeholders
    /// (`wallpaper-{user}`): each instance's run reloads the kind its values make, as a timeline
    /// template's instance's kind is made (`InstanceKind`); values that cannot make one are
    /// refused at the add, as a kind's are.
    package var stagedKind: String?

    package init(parameters: [String], firstRequest: FirstRequest = .core, pathParameters: [String] = [],
                widget: WidgetSpec? = nil, stagedKind: String? = nil) {
        self.parameters = parameters
        self.firstRequest = firstRequest
        self.pathParameters = pathParameters
        self.widget = widget
        self.stagedKind = stagedKind
    }

    /// Why these values (by parameter name) cannot be filled into this template's paths, or nil.
    package func pathProblem(_ values: [String: String]) -> String? {
        for name in pathParameters {
            if let value = values[name], let problem = InstanceName.pathValueProblem(value) { return "\(name): " + problem }
        }
        if case let .failure(problem)? = widgetKind(values) { return problem.message }
        if let stagedKind, case let .failure(problem) = InstanceKind.fill(stagedKind, values, what: "stage-playlist.widget") {
            return problem.message
        }
        return nil
    }
}

/// One instance of a template: its key and its parameter values (by parameter name). With one
/// parameter the value is the key.
public struct InstanceRecord: Sendable, Hashable, Codable {
    /// The template's identifier.
    public var template: String
    /// The instance's key, unique within its template (letters, digits, '.', '_', '@', '-').
    public var key: String
    /// The template's parameters' values, by name.
    public var values: [String: String]

    /// An instance as given; the scheduler checks the key and values when it is added.
    public init(template: String, key: String, values: [String: String]) {
        self.template = template
        self.key = key
        self.values = values
    }

    /// The values as stored: `region=eu&user=alice`, by name. Names and values are of safe
    /// alphabets (no `=` or `&`), so nothing needs escaping, and the row reads well in sqlite3.
    package var valuesText: String {
        values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
    }

    /// The values of a stored text (`valuesText`).
    package static func values(fromText text: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            guard let eq = pair.firstIndex(of: "=") else { continue }
            values[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        return values
    }

    /// The values of a stored text as a restore needs them: a text of one pair (an instance of a
    /// one-parameter template, whose value is its key) gives none, since the key says it and a
    /// restore keeps values only for templates of several parameters. At a million instances,
    /// building a dictionary per row was a seventh of a restart's time. Both stores read with it,
    /// so they restore the same records.
    package static func restoredValues(fromText text: String) -> [String: String] {
        text.utf8.contains(UInt8(ascii: "&")) ? values(fromText: text) : [:]
    }

    /// `app.feed.refresh[alice]`: the identifier its requests, runs and history are kept under.
    public var identifier: String { InstanceName.identifier(template: template, key: key) }
}

/// Instance identifiers and keys.
package enum InstanceName {
    /// At most this many bytes in a key.
    package static let maximumKeyBytes = 128

    /// What a key may hold, said in messages.
    package static let keyExpectation = "1 to 128 bytes of letters, digits, '.', '_', '@' and '-'"

    /// `template[key]`.
    package static func identifier(template: String, key: String) -> String { template + "[" + key + "]" }

    /// The template and key of an instance identifier, or nil for any other identifier.
    package static func split(_ identifier: String) -> (template: String, key: String)? {
        guard identifier.utf8.last == UInt8(ascii: "]"), let open = identifier.utf8.firstIndex(of: UInt8(ascii: "[")) else {
            return nil
        }
        let template = String(identifier[..<open])
        let key = String(identifier[identifier.index(after: open)..<identifier.index(before: identifier.endIndex)])
        guard !template.isEmpty, keyProblem(key) == nil else { return nil }
        return (template, key)
    }

    /// Why `key` cannot be an instance key, or nil. Keys appear in file names (publications),
    /// log lines, metrics and command lines, so they are a small safe alphabet: no space, no
    /// slash, no quote, nothing a shell or a path would read as syntax.
    package static func keyProblem(_ key: String, what: String = "key") -> String? {
        let bytes = key.utf8.count
        guard bytes >= 1, bytes <= maximumKeyBytes else {
            return "the \(what) is \(bytes) bytes long; expected \(keyExpectation)"
        }
        for byte in key.utf8 where !isKeyByte(byte) {
            return "the \(what) \(EchoText.quoted(key, limit: 80)) holds \(EchoText.quoted(String(decoding: [byte], as: UTF8.self), limit: 80)); expected \(keyExpectation)"
        }
        return nil
    }

    /// Whether `key` is a valid key (`keyProblem` is nil), without building a message.
    package static func isValidKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        return utf8.count >= 1 && utf8.count <= maximumKeyBytes && utf8.allSatisfy(isKeyByte)
    }

    /// Why `value` cannot be filled into a path, or nil. A value is already a valid key (1-128
    /// bytes of `[A-Za-z0-9._@-]`: no `/`, no NUL, nothing to escape), so the one way it could
    /// make a path segment `.` or `..` (leaving its folder) or a hidden name is a leading `.`:
    /// such a value is refused, not escaped (an escaped name would be a second spelling of a
    /// user's folder). A segment holding a placeholder then always holds a byte other than `.`.
    package static func pathValueProblem(_ value: String) -> String? {
        guard value.utf8.first == UInt8(ascii: ".") else { return nil }
        return "the value \(EchoText.quoted(value, limit: 80)) begins with '.'; a value filled into a path (stage-playlist "
            + "library or folder, a playlist widget's folder) may not ('.', '..' and hidden names would leave or hide in its folder); expected "
            + "\(keyExpectation), not beginning with '.'"
    }

    static func isKeyByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "@") || b == UInt8(ascii: "-")
    }
}

/// `{name}` placeholders in a template's text; `{{` is a literal `{`. A `}` outside a
/// placeholder is literal.
package enum Placeholders {
    /// A piece of a template text.
    package enum Piece: Sendable, Hashable {
        case text(String)
        case placeholder(String)
    }

    /// A problem in a text, at a 0-based UTF-8 byte offset of the text.
    package struct Problem: Sendable, Hashable {
        package var offset: Int
        package var message: String
    }

    /// The pieces of `text`, or the first problem (an unclosed `{`, an empty or malformed name).
    package static func parse(_ text: String) -> Result<[Piece], ProblemError> {
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            guard b == UInt8(ascii: "{") else {
                literal.append(b)
                i += 1
                continue
            }
            if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "{") {
                literal.append(b)
                i += 2
                continue
            }
            guard let close = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "}")) else {
                return .failure(ProblemError(Problem(offset: i, message: "an unclosed '{'; expected {name}, or {{ for a literal brace")))
            }
            let name = String(decoding: bytes[(i + 1)..<close], as: UTF8.self)
            guard isParameterName(name) else {
                return .failure(ProblemError(Problem(offset: i, message: "\(EchoText.quoted("{" + name + "}", limit: 80)) is not a placeholder; expected {name} with a parameter name of letters, digits, - and _, or {{ for a literal brace")))
            }
            if !literal.isEmpty {
                pieces.append(.text(String(decoding: literal, as: UTF8.self)))
                literal.removeAll()
            }
            pieces.append(.placeholder(name))
            i = close + 1
        }
        if !literal.isEmpty { pieces.append(.text(String(decoding: literal, as: UTF8.self))) }
        return .success(pieces)
    }

    /// The problem as an error (a `Result` needs one).
    package struct ProblemError: Error, Sendable, Hashable {
        package var problem: Problem
        init(_ problem: Problem) { self.problem = problem }
    }

    /// The names used in `text` with the offset of each, or the first problem.
    package static func names(in text: String) -> Result<[(name: String, offset: Int)], ProblemError> {
        // Offsets are found again by a second scan: `parse` keeps the pieces only.
        var found: [(String, Int)] = []
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "{") {
                if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "{") { i += 2; continue }
                guard let close = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "}")) else { break }
                found.append((String(decoding: bytes[(i + 1)..<close], as: UTF8.self), i))
                i = close + 1
                continue
            }
            i += 1
        }
        switch parse(text) {
        case let .failure(problem): return .failure(problem)
        case .success: return .success(found)
        }
    }

    /// Whether `text` holds any `{` (a placeholder or an escape): texts without one are used as
    /// they are, so a job without placeholders costs nothing at launch.
    @inline(__always)
    package static func mayHavePlaceholders(_ text: String) -> Bool { text.utf8.contains(UInt8(ascii: "{")) }

    /// `text` with each placeholder replaced by its value and `{{` by `{` (a name without a
    /// value is left as written: the configuration refuses unknown names, so only a bug gets here).
    package static func fill(_ text: String, _ values: [String: String]) -> String {
        guard mayHavePlaceholders(text), case let .success(pieces) = parse(text) else { return text }
        var out = ""
        for piece in pieces {
            switch piece {
            case let .text(t): out += t
            case let .placeholder(name): out += values[name] ?? "{\(name)}"
            }
        }
        return out
    }

    /// A parameter name: letters, digits, `-` and `_`, starting with a letter or `_`.
    package static func isParameterName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(first >= 0x30 && first <= 0x39), first != UInt8(ascii: "-") else { return false }
        return name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }
}

/// Why an instance could not be added or removed.
public enum InstanceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No template of that identifier is declared.
    case unknownTemplate(String)
    /// The key is not a valid instance key.
    case badKey(template: String, key: String, problem: String)
    /// The values do not name exactly the template's parameters.
    case badValues(template: String, key: String, problem: String)
    /// Removing an instance that does not exist.
    case unknownInstance(template: String, key: String)
    /// The scheduler is stopping.
    case stopping
    /// The change could not be committed (the runtime stops); nothing of it was kept.
    case notSaved(reason: String)

    /// A stable lowercase code for machine readers (the control socket's error codes).
    public var code: String {
        switch self {
        case .unknownTemplate: "unknown-template"
        case .badKey: "bad-key"
        case .badValues: "bad-values"
        case .unknownInstance: "unknown-instance"
        case .stopping: "stopping"
        case .notSaved: "not-saved"
        }
    }

    /// One line saying what was refused and why.
    public var description: String {
        switch self {
        case let .unknownTemplate(t):
            "\(t) is not a declared template; expected the identifier of a job file with template: true"
        case let .badKey(t, _, problem):
            "\(t): \(problem)"
        case let .badValues(t, key, problem):
            "\(InstanceName.identifier(template: t, key: key)): \(problem)"
        case let .unknownInstance(t, key):
            "\(InstanceName.identifier(template: t, key: key)) is not an instance; expected a key listed by refreshd ctl instance list \(t)"
        case .stopping:
            "the scheduler is stopping"
        case let .notSaved(reason):
            "the change could not be committed (\(reason)); refreshd is stopping"
        }
    }
}

/// The most failing instances of a template (issue 23), the one ranking `/metrics`, `watch` and
/// `stats` show: at most `top`, the most failures first, ties by key, so two readings of one
/// state list the same instances in the same order. What is per instance stays bounded: a
/// million users are ten names, never a million rows or series.
package enum FailingInstances {
    /// How many are named.
    package static let top = 10

    /// The `limit` entries with the highest counts, highest first, ties by key.
    package static func most(_ failing: [(key: String, count: Int)], limit: Int = top) -> [(key: String, count: Int)] {
        Array(failing.sorted { $0.count != $1.count ? $0.count > $1.count : $0.key < $1.key }.prefix(limit))
    }
}
