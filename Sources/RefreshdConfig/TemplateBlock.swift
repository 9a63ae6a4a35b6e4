import Foundation
import RefreshdCore

/// A job file's `template: true` and `parameters: [user, region]` (issue 23), and the check of
/// its `{name}` placeholders: every placeholder names a parameter, at its exact column.
///
/// Placeholders are allowed in the command's arguments (not in the program, `command[0]`: it is
/// resolved and checked when the file is read, and a per-instance program would let a key
/// choose what runs), in environment values, in `stage-playlist:`'s `library` and `folder` and a
/// `provider: playlist` template's `widget.folder` (each instance stages from and into its own
/// folder, and its widget reads it; the parameters used there are the template's
/// `pathParameters`, whose values the core holds to `InstanceName.pathValueProblem`). A timeline
/// template's `widget.kind` and a staging template's `stage-playlist.widget` hold placeholders
/// too (each instance a widget of its own, `InstanceKind`); they are read and checked by
/// `WidgetBlock.kindPattern`.
struct TemplateSettings {
    var isTemplate = false
    var templateLocation: Location?
    var parameters: [String]?
    var parametersKeyLocation: Location?
    var commandNode: YAMLNode?
    var environmentNode: YAMLNode?
    /// `simulate:`, whose `activity.id` may hold the template's placeholders (and `{run}`).
    var simulateNode: YAMLNode?
    /// `instances: FILE`: the list of the template's instances (see `InstanceSourceFile`).
    var instancesNode: (keyNode: YAMLNode, value: YAMLNode)?
    var source: [InstanceRecord]?
    /// The parameters `stage-playlist:`'s paths hold (set by `check`).
    var pathParameters: [String] = []

    /// The longest folder name a file system takes (NAME_MAX).
    static let maximumFolderBytes = 255
    /// The longest path (PATH_MAX, with its NUL): `stage-playlist.library`, filled.
    static let maximumPathBytes = 4095

    /// Reads `instances: FILE` (relative to the job file's folder) once the template is known.
    mutating func readSource(identifier: String?, jobFile: String, widgetKind: String? = nil, _ sink: inout ErrorSink) {
        guard let (keyNode, value) = instancesNode else { return }
        guard isTemplate else {
            sink.add(at: keyNode.location, "instances: applies only to a template; expected template: true beside it, or no instances:")
            return
        }
        guard let identifier, let parameters else { return }
        guard let path = ValueReader(key: "instances", node: value).string(&sink, expected: "the path of a list of keys, like users.txt or users.csv"),
              !path.isEmpty else { return }
        let folder = (jobFile as NSString).deletingLastPathComponent
        let resolved = path.hasPrefix("/") ? path : PathText.join(folder.isEmpty ? "." : folder, path)
        source = InstanceSourceFile.read(path: resolved, template: identifier, parameters: parameters, widgetKind: widgetKind, &sink)
    }

    /// `template: true|false`.
    mutating func readTemplate(_ reader: ValueReader, _ sink: inout ErrorSink) {
        templateLocation = reader.node.location
        isTemplate = reader.bool(&sink) ?? false
    }

    /// `parameters: [user, region]` (or one name): names of letters, digits, - and _, unique.
    mutating func readParameters(_ reader: ValueReader, keyNode: YAMLNode, _ sink: inout ErrorSink) {
        parametersKeyLocation = keyNode.location
        let expected = "a list of parameter names like [user] or [user, region] (letters, digits, - and _)"
        let nodes: [YAMLNode]
        switch reader.node {
        case .sequence(let sequence, _):
            nodes = sequence
        case .scalar:
            nodes = [reader.node]
        default:
            sink.add(at: reader.node.location, "parameters: expected \(expected), found \(reader.node.foundDescription)")
            return
        }
        if nodes.isEmpty {
            sink.add(at: reader.node.location, "parameters: expected \(expected), found an empty list")
            return
        }
        var names: [String] = []
        var valid = true
        for node in nodes {
            guard let name = node.scalarText, Placeholders.isParameterName(name) else {
                sink.add(at: node.location, "parameters: expected \(expected), found \(node.foundDescription)")
                valid = false
                continue
            }
            if names.contains(name) {
                sink.add(at: node.location, "parameters: \(EchoText.quoted(name)) is listed twice; expected each name once")
                valid = false
                continue
            }
            names.append(name)
        }
        if valid { parameters = names }
    }

    /// Rules across settings: a template needs parameters, parameters need a template, a
    /// template is a command job, and every placeholder names a parameter.
    mutating func check(kindLocation: Location?, isTimeline: Bool, stageNode: YAMLNode?, widgetNode: YAMLNode? = nil,
                        mappingLocation: Location,
                        source: SourceText, _ sink: inout ErrorSink) {
        if isTemplate {
            if parameters == nil, parametersKeyLocation == nil, !sink.suggestedKeys.contains("parameters") {
                sink.add(at: templateLocation ?? mappingLocation, "template: true needs parameters: "
                    + "(expected parameters: [user], the names its {placeholders} use)")
            }
        } else if let parametersKeyLocation, !sink.suggestedKeys.contains("template") {
            sink.add(at: parametersKeyLocation, "parameters: applies only to a template; expected template: true beside it, or no parameters:")
        }
        let known = isTemplate ? (parameters ?? []) : []
        // A modelled activity's id: `{run}`, and a template's parameters (filled per instance
        // as a widget kind is, `InstanceKind`); any other placeholder is located.
        if let idNode = Self.activityIDNode(simulateNode), let text = idNode.scalarText, Placeholders.mayHavePlaceholders(text) {
            Self.checkPlaceholders(text, node: idNode, what: "simulate.activity.id", known: known + ["run"], source: source, &sink)
        }
        // Without a template every `{name}` is literal text, as before templates existed.
        guard isTemplate, parameters != nil else { return }
        if case .sequence(let elements, _)? = commandNode {
            for (index, element) in elements.enumerated() {
                guard let text = element.scalarText else { continue }
                if index == 0 {
                    if text.utf8.contains(UInt8(ascii: "{")), Self.hasPlaceholder(text) {
                        sink.add(at: element.location, "command: the program cannot hold a placeholder (it is checked when the "
                            + "file is read); expected placeholders in the arguments, like [\"Scripts/refresh\", \"--user\", \"{user}\"]")
                    }
                    continue
                }
                Self.checkPlaceholders(text, node: element, what: "command", known: known, source: source, &sink)
            }
        }
        if case .mapping(let pairs, _)? = environmentNode {
            for (keyNode, valueNode) in pairs {
                guard let name = keyNode.scalarText, let value = valueNode.scalarText else { continue }
                Self.checkPlaceholders(value, node: valueNode, what: "environment.\(name)", known: known, source: source, &sink)
            }
        }
        // Paths: `stage-playlist`'s library and folder, `provider: playlist`'s widget.folder.
        var used: Set<String> = []
        if case .mapping(let pairs, _)? = stageNode {
            for (keyNode, valueNode) in pairs {
                guard let name = keyNode.scalarText, ["library", "folder"].contains(name) else { continue }
                checkPath(valueNode, what: "\(ActionSpec.stagePlaylistName).\(name)", isFolder: name == "folder", known: known,
                          used: &used, source: source, &sink)
            }
        }
        if case .mapping(let pairs, _)? = widgetNode,
           let (_, valueNode) = pairs.first(where: { $0.key.scalarText == "folder" }) {
            checkPath(valueNode, what: "widget.folder", isFolder: true, known: known, used: &used, source: source, &sink)
        }
        pathParameters = known.filter(used.contains)
    }

    /// The placeholders of a path setting, and its longest filling (every value 128 bytes): a
    /// folder name at most 255 bytes, a library path at most 4095. Adds the parameters it uses.
    private func checkPath(_ valueNode: YAMLNode, what: String, isFolder: Bool, known: [String], used: inout Set<String>,
                           source: SourceText, _ sink: inout ErrorSink) {
        guard let value = valueNode.scalarText, Placeholders.mayHavePlaceholders(value) else { return }
        let before = sink.errors.count
        Self.checkPlaceholders(value, node: valueNode, what: what, known: known, source: source, &sink)
        guard sink.errors.count == before, case let .success(pieces) = Placeholders.parse(value) else { return }
        var longest = 0
        for piece in pieces {
            switch piece {
            case let .text(text): longest += text.utf8.count
            case let .placeholder(parameter):
                used.insert(parameter)
                longest += InstanceName.maximumKeyBytes
            }
        }
        let limit = isFolder ? Self.maximumFolderBytes : Self.maximumPathBytes
        if longest > limit {
            sink.add(at: valueNode.location, "\(what): with 128-byte values the \(isFolder ? "folder name" : "path") could be "
                + "\(longest) bytes; expected at most \(limit) (shorten the text around the placeholders)")
        }
    }

    /// `simulate: {activity: {id: ...}}`'s id node, if written.
    static func activityIDNode(_ simulate: YAMLNode?) -> YAMLNode? {
        guard case let .mapping(pairs, _)? = simulate,
              case let .mapping(fields, _)? = pairs.first(where: { $0.key.scalarText == "activity" })?.value else { return nil }
        return fields.first { $0.key.scalarText == "id" }?.value
    }

    private static func hasPlaceholder(_ text: String) -> Bool {
        guard case let .success(pieces) = Placeholders.parse(text) else { return true }
        return pieces.contains { if case .placeholder = $0 { true } else { false } }
    }

    /// Each placeholder of `text` names a known parameter; a malformed one is reported too.
    static func checkPlaceholders(_ text: String, node: YAMLNode, what: String, known: [String], source: SourceText,
                                  _ sink: inout ErrorSink) {
        guard Placeholders.mayHavePlaceholders(text) else { return }
        func column(_ offset: Int) -> Int {
            String(decoding: Array(text.utf8.prefix(offset)), as: UTF8.self).unicodeScalars.count + 1
        }
        switch Placeholders.names(in: text) {
        case let .failure(error):
            sink.add(at: node.location(ofTextColumn: column(error.problem.offset), in: source), "\(what): \(error.problem.message)")
        case let .success(names):
            for (name, offset) in names where !known.contains(name) {
                sink.add(at: node.location(ofTextColumn: column(offset), in: source),
                         "\(what): unknown placeholder {\(name)}; expected one of the parameters "
                             + known.map { "{\($0)}" }.joined(separator: ", ") + " (or {{ for a literal brace)")
            }
        }
    }
}
