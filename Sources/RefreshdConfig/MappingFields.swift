/// The keys of one small mapping in a scenario file (`{at: +1d, for: 3h}`), read by name, with
/// "missing required key" errors that name an example of the whole mapping.
struct MappingFields {
    /// The mapping's reader: its key names the fields in messages (`down.at`).
    let reader: ValueReader
    let pairs: [(key: String, keyNode: YAMLNode, value: YAMLNode)]
    /// The mapping written out in full, like `{at: +1d2h, for: 3h}`.
    let example: String

    /// Nil, with an error, when the value is not a mapping; unknown keys are reported.
    init?(_ reader: ValueReader, known: [String], example: String, _ sink: inout ErrorSink) {
        guard case .mapping = reader.node else {
            sink.add(at: reader.node.location, "\(reader.key): expected a mapping like \(example), found \(reader.node.foundDescription)")
            return nil
        }
        guard let pairs = reader.mapping(known: known, &sink) else { return nil }
        self.reader = reader
        self.pairs = pairs
        self.example = example
    }

    /// The reader of `name`'s value, if the mapping has it.
    func optional(_ name: String) -> ValueReader? {
        pairs.first { $0.key == name }.map { ValueReader(key: reader.key + "." + name, node: $0.value) }
    }

    /// Where `name`'s key is written, if the mapping has it.
    func keyLocation(_ name: String) -> Location? {
        pairs.first { $0.key == name }?.keyNode.location
    }

    /// The reader of `name`'s value, or an error at the mapping when it is missing (unless a
    /// misspelling of it was already pointed out).
    func required(_ name: String, _ sink: inout ErrorSink) -> ValueReader? {
        if let value = optional(name) { return value }
        if !sink.suggestedKeys.contains(reader.key + "." + name) {
            sink.add(at: reader.node.location, "\(reader.key): missing required key \"\(name)\" (expected \(example))")
        }
        return nil
    }
}
