/// A list item named by its only key, as faults and expectations are written:
/// `- kill: {at: +1d}`. A bare name (`- no-violation`) is an item whose value is null.
enum SingleKeyItem {
    /// The item's kind (one of `kinds`), its key node and its value; nil with an error otherwise.
    static func read(_ item: YAMLNode, list: String, kinds: [String], example: String,
                     _ sink: inout ErrorSink) -> (kind: String, keyNode: YAMLNode, value: YAMLNode)? {
        let expected = "an item like \(example) (one of \(kinds.joined(separator: ", ")))"
        switch item {
        case .scalar:
            guard let text = item.scalarText else {
                sink.add(at: item.location, "\(list): expected \(expected), found \(item.foundDescription)")
                return nil
            }
            guard !text.hasNUL else { return nil }  // reported by the composer
            guard kinds.contains(text) else {
                sink.add(at: item.location, MappingReader.unknownKeyMessage(text, known: kinds, prefix: list + "."))
                return nil
            }
            return (text, item, .scalar(.init(string: "", style: .plain, location: item.location)))
        case .sequence:
            sink.add(at: item.location, "\(list): expected \(expected), found a list")
            return nil
        case .mapping(let mapping, _):
            let pairs = MappingReader.pairs(of: mapping, known: kinds, prefix: list + ".", &sink)
            if pairs.count > 1 {
                sink.add(at: pairs[1].keyNode.location, "\(list): expected one kind per item, "
                    + "found \(pairs[0].key) and \(pairs[1].key) in one item; start each with its own -")
                return nil
            }
            if mapping.isEmpty {
                sink.add(at: item.location, "\(list): expected \(expected), found an empty mapping")
                return nil
            }
            guard let first = pairs.first else { return nil }  // its key was unknown, and reported
            return (first.key, first.keyNode, first.value)
        }
    }
}
