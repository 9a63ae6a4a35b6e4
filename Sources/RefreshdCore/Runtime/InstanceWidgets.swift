/// Per-instance widget kinds and activity ids (issue 23): a template's `widget.kind` (and a
/// modelled activity's id) may hold its `{placeholders}`; each instance then has a kind of its
/// own, derived from its values.
///
/// A kind is 1-64 bytes of `[A-Za-z0-9._-]`, not beginning with `.`: it names the provider runs'
/// namespace (`widget.<kind>`, a namespace's alphabet), files and folders of the shared container
/// (`widgets/<kind>/`, `cache/widgets/<kind>`), store keys (`kind/family`) and the
/// `{"reloadTimelines": KIND}` line. A key may also hold `@` (e-mail-like users), which none of
/// those take, so a value is written into a kind with each `@` as `-at-` (`alice@example.com`
/// -> `alice-at-example.com`): readable, and what a widget extension computes from its user to
/// find its folder. Two instances whose kinds come out the same (`a@b` and `a-at-b`) cannot
/// share a widget: the second add is refused, naming the first. Anything else a kind cannot be
/// (longer than 64 bytes, beginning with `.`) is refused at the add, naming the instance and
/// the parameter; never escaped or cut (a cut kind could be another user's). Any valid kind is
/// one safe path segment (no `/`, never `.` or `..`), so publications stay inside the container.
package enum InstanceKind {
    /// The most bytes in a widget kind.
    package static let maximumKindBytes = 64
    /// The most bytes in an activity id.
    package static let maximumActivityIDBytes = 128

    /// How a kind is derived, said in messages.
    package static let derivation = "each '@' of a value is written \"-at-\""

    /// A value as it is written into a kind or an activity id: itself, each `@` as `-at-`.
    package static func form(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "@")) else { return value }
        return value.split(separator: "@", omittingEmptySubsequences: false).joined(separator: "-at-")
    }

    /// Whether `text` is a valid widget kind (or, with `maximumBytes` 128, activity id).
    package static func isValid(_ text: String, maximumBytes: Int = maximumKindBytes) -> Bool {
        let utf8 = text.utf8
        guard let first = utf8.first, first != UInt8(ascii: "."), utf8.count <= maximumBytes else { return false }
        return utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }

    /// The text `pattern` makes with these values (each in its `form`), or why not, naming the
    /// parameter at fault. `what` names the setting in the message (`widget.kind`).
    package static func fill(_ pattern: String, _ values: [String: String], what: String = "widget.kind",
                            maximumBytes: Int = maximumKindBytes) -> Result<String, Problem> {
        guard case let .success(pieces) = Placeholders.parse(pattern) else {
            return .failure(Problem(parameter: nil, message: "\(what) \(EchoText.quoted(pattern, limit: 80)) is malformed"))
        }
        var out = ""
        var used: [String] = []
        for piece in pieces {
            switch piece {
            case let .text(text): out += text
            case let .placeholder(name):
                if out.isEmpty, values[name]?.utf8.first == UInt8(ascii: ".") {
                    return .failure(Problem(parameter: name, message: "\(name): the value \(EchoText.quoted(values[name] ?? "", limit: 80)) "
                        + "begins with '.', and \(what) \(EchoText.quoted(pattern, limit: 80)) begins with {\(name)}; expected a value not "
                        + "beginning with '.' (a kind names a folder of the shared container: '.', '..' and hidden names are refused)"))
                }
                out += form(values[name] ?? "")
                if !used.contains(name) { used.append(name) }
            }
        }
        guard out.utf8.count <= maximumBytes else {
            let name = used.max { (values[$0]?.utf8.count ?? 0) < (values[$1]?.utf8.count ?? 0) }
            return .failure(Problem(parameter: name, message: (name.map { "\($0): " } ?? "") + "\(what) "
                + "\(EchoText.quoted(pattern, limit: 80)) would be \(EchoText.quoted(out, limit: 80)), \(out.utf8.count) bytes; "
                + "expected at most \(maximumBytes) (\(derivation)); use a shorter value or less text around the placeholder"))
        }
        guard isValid(out, maximumBytes: maximumBytes) else {
            return .failure(Problem(parameter: used.first, message: "\(what) \(EchoText.quoted(pattern, limit: 80)) would be "
                + "\(EchoText.quoted(out, limit: 80)); expected letters, digits, '.', '_' and '-' (\(derivation))"))
        }
        return .success(out)
    }

    /// Why a pattern cannot make a kind, naming the parameter at fault when there is one.
    package struct Problem: Error, Sendable, Hashable {
        package var parameter: String?
        package var message: String
    }
}

extension TemplateSpec {
    /// The kind of an instance's widget (its values by parameter name), or why it cannot have
    /// one; nil when the template has no widget.
    package func widgetKind(_ values: [String: String]) -> Result<String, InstanceKind.Problem>? {
        widget.map { InstanceKind.fill($0.kind, values) }
    }

    /// An instance's widget: the template's, its kind filled; nil without one or when the
    /// values cannot make a kind (refused at the add).
    package func instanceWidget(_ values: [String: String]) -> WidgetSpec? {
        guard var widget, case let .success(kind)? = widgetKind(values) else { return nil }
        widget.kind = kind
        return widget
    }

    /// The values by parameter name of an instance record as a restore gives it (one parameter:
    /// none, the key is the value).
    package func values(of record: InstanceRecord) -> [String: String] {
        if !record.values.isEmpty { return record.values }
        return parameters.count == 1 ? [parameters[0]: record.key] : [:]
    }
}

extension InstanceKind {
    /// A plain timeline job whose widget kind is an instance's (issue 23): the two would share
    /// one widget (the job's declaration would take the instance's over), so the job is refused.
    package struct Clash: Sendable, Hashable {
        /// The plain job's identifier.
        package var job: String
        package var kind: String
        /// The instance whose widget has that kind, and its template's kind pattern.
        package var instance: String
        package var pattern: String

        /// What is wrong, for an error at the job's `widget.kind`.
        package var message: String {
            let key = InstanceName.split(instance)
            return "\(EchoText.quoted(kind, limit: 80)) is the widget kind of instance \(instance) (its template's kind "
                + "\(EchoText.quoted(pattern, limit: 80)), \(derivation)); two widgets cannot share a kind: expected a kind "
                + "no instance has, or remove the instance first"
                + (key.map { " (refreshd ctl instance remove \($0.template) \($0.key))" } ?? "")
        }
    }

    /// The clashes between the plain timeline jobs of `specs` and the instances of its timeline
    /// templates: `instances(template)` gives a template's instances as they will be (its
    /// `instances:` list when it has one, which the reload applies as its set). Values that make
    /// no kind are skipped (their add is refused). One pass over the instances, and nothing at
    /// all without a plain timeline job.
    package static func clashes(_ specs: [JobSpec], instances: (JobSpec) -> [InstanceRecord]) -> [Clash] {
        var plain: [String: String] = [:]
        for spec in specs where spec.template == nil {
            if let kind = spec.widget?.kind, plain[kind] == nil { plain[kind] = spec.identifier }
        }
        guard !plain.isEmpty else { return [] }
        var found: [Clash] = []
        for spec in specs {
            guard let template = spec.template, let widget = template.widget else { continue }
            for record in spec.instanceSource?.records ?? instances(spec) {
                guard case let .success(kind) = fill(widget.kind, template.values(of: record)), let job = plain[kind] else { continue }
                found.append(Clash(job: job, kind: kind, instance: record.identifier, pattern: widget.kind))
            }
        }
        return found.sorted { ($0.job, $0.instance) < ($1.job, $1.instance) }
    }
}
