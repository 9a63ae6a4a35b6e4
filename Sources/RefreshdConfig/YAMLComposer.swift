internal import CLibYAML

/// Builds a job file's node tree from libyaml's events, refusing what a job file must not be
/// before anything walks it.
///
/// A composer that checks for duplicate keys by hashing whole key nodes (as Yams' does) never
/// ends on an alias bomb used as a mapping key (`? *a9`, where `a9` names 10^10 scalars in under
/// 1 KB): the hash walks the full expansion. Here every event is counted as it arrives: an
/// alias counts as a full copy of the value it names, so the alias that would push the document
/// past `JobFileLimits.maximumValues` values, `maximumAliases` aliases or `maximumDepth` levels
/// is refused at its own line and column, in constant time. Nodes are shared, never copied, and
/// duplicate keys are found by their text (whatever their tag or quoting), never by hashing.
///
/// Problems that leave the tree usable (a duplicate key, an unsupported tag, a NUL in a value)
/// are collected so the rest of the file is still checked; syntax errors and exceeded limits stop
/// composing and are returned as a `Failure`.
struct YAMLComposer {
    /// A problem that stops composing: a syntax error or an exceeded limit.
    struct Failure: Error, Equatable {
        var location: Location
        var message: String
    }

    /// The document's root (nil for an empty file) and the problems that did not stop composing.
    struct Document {
        var root: YAMLNode?
        var problems: [(location: Location, message: String)] = []
    }

    /// Composes the single document of `yaml`.
    static func compose(_ yaml: String, kind: FileKind = .job) -> Result<Document, Failure> {
        var text = yaml
        return text.withUTF8 { buffer in
            var composer = YAMLComposer(source: yaml, kind: kind)
            return composer.run(buffer)
        }
    }

    private let source: String
    private let kind: FileKind
    private var document = Document()
    private var stack: [Frame] = []
    private var anchors: [String: Anchored] = [:]
    private var values = 0
    private var aliases = 0
    private var documents = 0

    private init(source: String, kind: FileKind) {
        self.source = source
        self.kind = kind
    }

    /// An anchored value, with what an alias to it costs.
    private struct Anchored {
        var node: YAMLNode
        /// Values in its expansion (saturating at the limit + 1).
        var size: Int
        /// Levels of lists and mappings in it.
        var height: Int
    }

    /// A list or mapping being read.
    private struct Frame {
        var isMapping: Bool
        var location: Location
        var anchor: String?
        var nodes: [YAMLNode] = []
        var pairs: [(key: YAMLNode, value: YAMLNode)] = []
        var pendingKey: YAMLNode?
        var dropPendingKey = false
        /// Each scalar key's text and line, to find duplicates.
        var keys: [String: Int] = [:]
        /// `values` when the collection started, so its size is known at its end.
        var valuesAtStart: Int
        var height = 0
    }

    private mutating func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Document, Failure> {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return .failure(Failure(location: .start, message: "invalid YAML: out of memory"))
        }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        let empty: [UInt8] = [0]
        return empty.withUnsafeBufferPointer { fallback in
            let input = buffer.baseAddress ?? fallback.baseAddress!
            yaml_parser_set_input_string(&parser, input, buffer.count)
            var event = yaml_event_t()
            while true {
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    return .failure(YAMLSyntaxMessage.failure(of: parser, in: source))
                }
                let done = event.type == YAML_STREAM_END_EVENT
                let outcome = handle(&event)
                yaml_event_delete(&event)
                if let outcome { return .failure(outcome) }
                if done { return .success(document) }
            }
        }
    }

    private static func location(_ mark: yaml_mark_t) -> Location {
        Location(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// Handles one event; a failure ends composing.
    private mutating func handle(_ event: inout yaml_event_t) -> Failure? {
        let location = Self.location(event.start_mark)
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                return Failure(location: location,
                               message: "invalid YAML: found another document; a \(kind.noun) holds \(kind.holds) (one document)")
            }
        case YAML_SCALAR_EVENT:
            let data = event.data.scalar
            if let failure = count(1, at: location) { return failure }
            let bytes = UnsafeBufferPointer(start: data.value, count: data.length)
            let text = String(decoding: bytes, as: UTF8.self)
            if bytes.contains(0) {
                document.problems.append((location, "found a NUL character (\\0) in \(EchoText.quoted(text)); "
                    + "expected text without NUL (commands, environment values and names cannot hold it)"))
            }
            checkTag(Self.string(data.tag), allowed: "tag:yaml.org,2002:str", at: location)
            let style: YAMLNode.Style = switch data.style {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE: .literal
            case YAML_FOLDED_SCALAR_STYLE: .folded
            default: .plain
            }
            let node = YAMLNode.scalar(.init(string: text, style: style, location: location))
            let anchor = Self.string(data.anchor)
            if let anchor { anchors[anchor] = Anchored(node: node, size: 1, height: 0) }
            attach(node, at: location, height: 0)
        case YAML_ALIAS_EVENT:
            let name = Self.string(event.data.alias.anchor) ?? ""
            aliases += 1
            if aliases > JobFileLimits.maximumAliases {
                return Failure(location: location, message: "alias *\(EchoText.escaped(name)) is one alias too many; "
                    + "expected at most \(JobFileLimits.maximumAliases) aliases in a \(kind.noun)")
            }
            guard let anchored = anchors[name] else {
                let open = stack.contains { $0.anchor == name }
                return Failure(location: location, message: open
                    ? "alias *\(EchoText.escaped(name)) is inside the value anchored &\(EchoText.escaped(name)) it names; "
                        + "expected an alias to a value that is complete (a value cannot contain itself)"
                    : "alias *\(EchoText.escaped(name)) names no anchor; expected an anchor &\(EchoText.escaped(name)) "
                        + "defined before the alias")
            }
            if values + anchored.size > JobFileLimits.maximumValues {
                return Failure(location: location, message: "alias *\(EchoText.escaped(name)) would expand the file to more than "
                    + "\(JobFileLimits.maximumValues) values (an alias counts as a copy of what it names); "
                    + "expected a \(kind.noun) of at most \(JobFileLimits.maximumValues) values")
            }
            if stack.count + anchored.height > JobFileLimits.maximumDepth {
                return depthFailure(at: location)
            }
            values += anchored.size
            attach(anchored.node.relocated(to: location), at: location, height: anchored.height)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            if stack.count + 1 > JobFileLimits.maximumDepth { return depthFailure(at: location) }
            if let failure = count(1, at: location) { return failure }
            let tag = isMapping ? event.data.mapping_start.tag : event.data.sequence_start.tag
            checkTag(Self.string(tag), allowed: isMapping ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq", at: location)
            let anchor = Self.string(isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)
            stack.append(Frame(isMapping: isMapping, location: location, anchor: anchor, valuesAtStart: values - 1))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let frame = stack.popLast() else { return nil }
            let node: YAMLNode = frame.isMapping ? .mapping(frame.pairs, location: frame.location)
                : .sequence(frame.nodes, location: frame.location)
            let height = frame.height + 1
            if let anchor = frame.anchor {
                anchors[anchor] = Anchored(node: node, size: values - frame.valuesAtStart, height: height)
            }
            attach(node, at: frame.location, height: height)
        default:
            break
        }
        return nil
    }

    /// Counts `n` more values, failing past the limit.
    private mutating func count(_ n: Int, at location: Location) -> Failure? {
        values += n
        guard values > JobFileLimits.maximumValues else { return nil }
        return Failure(location: location, message: "the file has more than \(JobFileLimits.maximumValues) values; "
            + "expected a \(kind.noun) of at most \(JobFileLimits.maximumValues) values")
    }

    private func depthFailure(at location: Location) -> Failure {
        Failure(location: location, message: "values are nested more than \(JobFileLimits.maximumDepth) levels deep "
            + "(lists and mappings inside each other, aliases included); expected at most \(JobFileLimits.maximumDepth) levels")
    }

    /// Reports an explicit tag other than the ones that change nothing (`!`, and `!!str`,
    /// `!!seq` or `!!map` on their own kind of value).
    private mutating func checkTag(_ tag: String?, allowed: String, at location: Location) {
        guard let tag, tag != "!", tag != allowed else { return }
        let prefix = "tag:yaml.org,2002:"
        let shown = tag.hasPrefix(prefix) ? "!!" + tag.dropFirst(prefix.count) : tag
        document.problems.append((location, "unsupported tag \(EchoText.escaped(String(shown))); expected a plain value "
            + "without a tag (\(kind.plural) read every value as text; only !!str, !!seq and !!map are accepted)"))
    }

    /// Puts a finished value into the list or mapping being read, or makes it the root.
    private mutating func attach(_ node: YAMLNode, at location: Location, height: Int) {
        guard !stack.isEmpty else {
            document.root = node
            return
        }
        let last = stack.count - 1
        stack[last].height = max(stack[last].height, height)
        guard stack[last].isMapping else {
            stack[last].nodes.append(node)
            return
        }
        guard let key = stack[last].pendingKey else {
            stack[last].pendingKey = node
            stack[last].dropPendingKey = false
            if case .scalar(let scalar) = node {
                if let first = stack[last].keys[scalar.string] {
                    document.problems.append((location, "duplicate key \(EchoText.quoted(scalar.string)) (first at line \(first)); "
                        + "each key may appear only once in a mapping"))
                    stack[last].dropPendingKey = true
                } else {
                    stack[last].keys[scalar.string] = location.line
                }
            }
            return
        }
        if !stack[last].dropPendingKey { stack[last].pairs.append((key: key, value: node)) }
        stack[last].pendingKey = nil
    }
}
