import RefreshdCore

/// Reads a timeline job's `widget:` block:
///
/// ```yaml
/// widget:
///   kind: wallpaper                        # the widget kind (WidgetKit's kind string)
///   families: [systemSmall, systemMedium]  # on screen; each family once
///   budget: 50                             # reloads per family in any 24 h, or unlimited
///   shared-fetch: 5m                       # how long one upstream fetch serves the other families
///   min-reload-interval: 5m                # least time between two counted reloads of a family
///   budget-scope: family                   # or kind, or namespace: who shares the budget
///   policy: atEnd                          # provider: playlist only: or after-start-of-tomorrow
///   folder: wallpaper                      # provider: playlist only: the staged folder it reads
/// ```
///
/// A template's `folder` may hold its placeholders (`wallpaper-{user}`): each instance's
/// provider reads the folder its instance of a `stage-playlist` template stages into. Its
/// placeholders are checked with the template's (`TemplateSettings.check`), and its parameters
/// are path parameters, whose values the core holds to `InstanceName.pathValueProblem`.
enum WidgetBlock {
    static let keys = ["kind", "families", "budget", "shared-fetch", "min-reload-interval", "budget-scope", "policy", "folder"]
    /// The policies of `provider: playlist`, as written and as the provider names them.
    static let policies = ["atEnd": "atEnd", "after-start-of-tomorrow": "afterStartOfTomorrow"]

    /// The most reloads a budget may name: one a minute, all day.
    static let maximumBudget = 1440

    /// `playlistZone`: the zone of `provider: playlist`, nil for a command provider.
    /// `parameters`: a template's (nil for a job): its `kind` is then a pattern holding at least
    /// one of its placeholders, each instance's kind derived from its values (`InstanceKind`).
    static func read(_ reader: ValueReader, playlistZone: String?, parameters: [String]? = nil, source: SourceText? = nil,
                     _ sink: inout ErrorSink) -> WidgetSpec? {
        guard let pairs = reader.mapping(known: keys, &sink) else { return nil }
        var kind: String?
        var families: [String]?
        var budget: Int? = WidgetSpec.defaultBudget
        var sharedFetch: Duration = .seconds(300)
        var minReloadInterval = WidgetSpec.defaultMinReloadInterval
        var budgetScope = WidgetSpec.BudgetScope.family
        var policy = "atEnd"
        var folder = "wallpaper"
        var ok = true
        for pair in pairs {
            let value = ValueReader(key: "widget.\(pair.key)", node: pair.value)
            switch pair.key {
            case "kind":
                if let parameters, let source {
                    kind = kindPattern(value, parameters: parameters, source: source, &sink)
                } else {
                    kind = widgetKind(value, &sink)
                }
                ok = ok && kind != nil
            case "families":
                families = self.families(value, &sink)
                ok = ok && families != nil
            case "budget":
                if let count = self.budget(value, &sink) { budget = count } else { ok = false }
            case "shared-fetch":
                if let duration = value.duration(&sink, positive: false) { sharedFetch = duration } else { ok = false }
            case "min-reload-interval":
                if let duration = self.minReloadInterval(value, &sink) { minReloadInterval = duration } else { ok = false }
            case "budget-scope":
                if let scope = self.budgetScope(value, template: parameters != nil, &sink) { budgetScope = scope } else { ok = false }
            case "policy":
                if playlistZone == nil {
                    sink.add(at: pair.keyNode.location, "widget.policy: applies only to provider: playlist (a command's "
                        + "timeline names its own policy); expected provider: playlist, or no policy:")
                    ok = false
                } else if let name = value.oneOf(policies.keys.sorted(), &sink), let chosen = policies[name] {
                    policy = chosen
                } else {
                    ok = false
                }
            case "folder":
                if playlistZone == nil {
                    sink.add(at: pair.keyNode.location, "widget.folder: applies only to provider: playlist (the staged folder "
                        + "it reads); expected provider: playlist, or no folder:")
                    ok = false
                } else if let name = self.folder(value, template: parameters != nil, &sink) {
                    folder = name
                } else {
                    ok = false
                }
            default:
                break
            }
        }
        if kind == nil, ok {
            sink.add(at: reader.node.location, "widget: missing required key \"kind\" (expected the widget kind, like kind: wallpaper)")
            ok = false
        }
        if families == nil, ok {
            sink.add(at: reader.node.location, "widget: missing required key \"families\" "
                + "(expected a list like [systemSmall, systemMedium])")
            ok = false
        }
        guard ok, let kind, let families else { return nil }
        let provider: WidgetSpec.Provider = playlistZone.map { .action(.playlistProvider(zone: $0, policy: policy, folder: folder)) } ?? .command
        var spec = WidgetSpec(kind: kind, families: families, budget: budget, sharedFetch: sharedFetch, provider: provider)
        spec.minReloadInterval = minReloadInterval
        spec.budgetScope = budgetScope
        return spec
    }

    /// `widget.budget`: 1 to `maximumBudget` reloads a day, or `unlimited` (`.some(nil)`); nil
    /// when it is neither.
    static func budget(_ value: ValueReader, _ sink: inout ErrorSink) -> Int?? {
        if value.node.scalarText == "unlimited" { return .some(nil) }
        guard let count = value.count(&sink) else { return nil }
        if count < 1 || count > maximumBudget {
            sink.add(at: value.node.location, "widget.budget: expected 1 to \(maximumBudget) reloads a day, "
                + "or unlimited (for development), found \(count)")
            return nil
        }
        return count
    }

    /// `widget.min-reload-interval`: a duration of at most 24 h (0 for no spacing).
    static func minReloadInterval(_ value: ValueReader, _ sink: inout ErrorSink) -> Duration? {
        guard let duration = value.duration(&sink, positive: false) else { return nil }
        if duration > .seconds(86_400) {
            sink.add(at: value.node.location, "widget.min-reload-interval: expected at most 24h "
                + "(0 for no spacing), found \(formatDuration(duration))")
            return nil
        }
        return duration
    }

    /// `widget.budget-scope`: family, kind or namespace; not namespace in a template, whose
    /// instances each have a widget kind of their own.
    static func budgetScope(_ value: ValueReader, template: Bool, _ sink: inout ErrorSink) -> WidgetSpec.BudgetScope? {
        guard let name = value.oneOf(WidgetSpec.BudgetScope.allCases.map(\.rawValue), &sink),
              let scope = WidgetSpec.BudgetScope(rawValue: name) else { return nil }
        if template, scope == .namespace {
            sink.add(at: value.node.location, "widget.budget-scope: namespace would make every instance's widget "
                + "share one budget; an instance has one widget kind, so expected family or kind in a template")
            return nil
        }
        return scope
    }

    /// `widget.folder`: one folder name under the shared container, as `stage-playlist.folder`
    /// is (not empty, no `/` or NUL, not beginning with `.`, at most 255 bytes). In a template the
    /// text may hold placeholders (checked, and their longest filling, by `TemplateSettings`).
    static func folder(_ reader: ValueReader, template: Bool, _ sink: inout ErrorSink) -> String? {
        let expected = "one folder name under the shared container, like wallpaper (no '/', not beginning with '.')"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        guard !text.isEmpty, !text.utf8.contains(UInt8(ascii: "/")), !text.utf8.contains(0), text.utf8.first != UInt8(ascii: "."),
              (template && Placeholders.mayHavePlaceholders(text)) || text.utf8.count <= TemplateSettings.maximumFolderBytes else {
            sink.add(at: reader.node.location, "\(reader.key): expected \(expected), at most \(TemplateSettings.maximumFolderBytes) "
                + "bytes, found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }

    /// A widget kind: letters, digits, `.`, `_`, `-`; it names files in the shared container.
    static func widgetKind(_ reader: ValueReader, _ sink: inout ErrorSink) -> String? {
        guard let text = reader.string(&sink, expected: "a widget kind like wallpaper") else { return nil }
        let valid = !text.isEmpty && text.utf8.count <= 64 && text.first != "." && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)
        }
        guard valid else {
            sink.add(at: reader.node.location, "\(reader.key): expected 1 to 64 letters, digits, '.', '_' or '-' "
                + "(not starting with '.'), found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }

    /// A template's kind: text of a kind's alphabet around its placeholders, at least one, each
    /// a parameter (located at its column); with one-letter values it must make a valid kind
    /// (longer values are checked per instance, at its add).
    static func kindPattern(_ reader: ValueReader, parameters: [String], source: SourceText, _ sink: inout ErrorSink) -> String? {
        guard let text = reader.string(&sink, expected: "a widget kind like wallpaper.{user}") else { return nil }
        let before = sink.errors.count
        TemplateSettings.checkPlaceholders(text, node: reader.node, what: reader.key, known: parameters, source: source, &sink)
        guard sink.errors.count == before else { return nil }
        guard case let .success(pieces) = Placeholders.parse(text),
              pieces.contains(where: { if case .placeholder = $0 { true } else { false } }) else {
            sink.add(at: reader.node.location, "\(reader.key): a template's widget kind needs a placeholder (each instance has a "
                + "widget of its own); expected a kind like wallpaper.\(parameters.first.map { "{\($0)}" } ?? "{user}"), found \(EchoText.quoted(text))")
            return nil
        }
        let shortest = Dictionary(uniqueKeysWithValues: parameters.map { ($0, "a") })
        guard case .success = InstanceKind.fill(text, shortest, what: reader.key) else {
            sink.add(at: reader.node.location, "\(reader.key): expected letters, digits, '.', '_' or '-' around the placeholders "
                + "(not starting with '.', at most \(InstanceKind.maximumKindBytes) bytes once filled), found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }

    private static func families(_ reader: ValueReader, _ sink: inout ErrorSink) -> [String]? {
        guard case .sequence(let items, _) = reader.node, !items.isEmpty else {
            sink.add(at: reader.node.location, "\(reader.key): expected a non-empty list of families like "
                + "[systemSmall, systemMedium], found \(reader.node.foundDescription)")
            return nil
        }
        var families: [String] = []
        var ok = true
        for item in items {
            let value = ValueReader(key: reader.key, node: item)
            guard let family = value.oneOf(WidgetSpec.knownFamilies, &sink) else {
                ok = false
                continue
            }
            if families.contains(family) {
                sink.add(at: item.location, "\(reader.key): \(family) is listed twice; expected each family once "
                    + "(several instances of a family share one timeline)")
                ok = false
            }
            families.append(family)
        }
        return ok ? families : nil
    }
}
