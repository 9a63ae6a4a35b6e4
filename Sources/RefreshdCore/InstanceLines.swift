import Foundation

/// What one results line of a sync job says about a template's instances (issue 23):
/// `{"instances": "app.feed.refresh", "add": ["alice", {"key": "k1", "user": "bob", "region": "eu"}],
/// "remove": ["carol"]}`, or `"set": [...]`: the complete list (the `set` lines of one run
/// together), instances not in it removed and missing ones added. Applied at the end of a run
/// that succeeded, all in the run end's transaction.
package struct InstanceLines: Sendable, Hashable {
    package var template: String
    package var add: [InstanceRecord] = []
    package var remove: [String] = []
    package var set: [InstanceRecord]?

    package init(template: String, add: [InstanceRecord] = [], remove: [String] = [], set: [InstanceRecord]? = nil) {
        self.template = template
        self.add = add
        self.remove = remove
        self.set = set
    }

    /// Reads a decoded results line whose `instances` member is present: the lines, or why not.
    package static func read(_ object: [String: Any]) -> Result<InstanceLines, BadLine> {
        let expected = "expected {\"instances\": TEMPLATE, \"add\"|\"remove\"|\"set\": [KEY or {\"key\": KEY, NAME: VALUE, ...}, ...]}"
        guard let template = object["instances"] as? String, !template.isEmpty else {
            return .failure(BadLine("instances: the template's identifier, a string; " + expected))
        }
        var lines = InstanceLines(template: template)
        func records(_ field: String) -> Result<[InstanceRecord]?, BadLine> {
            guard let value = object[field] else { return .success(nil) }
            guard let items = value as? [Any] else { return .failure(BadLine("\(field): a list; " + expected)) }
            var found: [InstanceRecord] = []
            for item in items {
                if let key = item as? String {
                    found.append(InstanceRecord(template: template, key: key, values: [:]))
                } else if let members = item as? [String: Any], let key = members["key"] as? String {
                    var values: [String: String] = [:]
                    for (name, value) in members where name != "key" {
                        guard let text = value as? String else { return .failure(BadLine("\(field): \(name): a string value; " + expected)) }
                        values[name] = text
                    }
                    found.append(InstanceRecord(template: template, key: key, values: values))
                } else {
                    return .failure(BadLine("\(field): each item a key or an object with \"key\"; " + expected))
                }
            }
            return .success(found)
        }
        switch records("add") {
        case let .success(add): lines.add = add ?? []
        case let .failure(bad): return .failure(bad)
        }
        switch records("remove") {
        case let .success(remove): lines.remove = (remove ?? []).map(\.key)
        case let .failure(bad): return .failure(bad)
        }
        switch records("set") {
        case let .success(set): lines.set = set
        case let .failure(bad): return .failure(bad)
        }
        guard !lines.add.isEmpty || !lines.remove.isEmpty || lines.set != nil else {
            return .failure(BadLine("nothing to do; " + expected))
        }
        return .success(lines)
    }

    /// The line as the results channel writes it (`read` reads it back): `{"instances": T,
    /// "add": [{"key": K, NAME: VALUE, ...}], "remove": [K, ...], "set": [...]}`.
    package var object: [String: Any] {
        func items(_ records: [InstanceRecord]) -> [[String: String]] {
            records.map { record in record.values.merging(["key": record.key]) { _, key in key } }
        }
        var object: [String: Any] = ["instances": template]
        if !add.isEmpty { object["add"] = items(add) }
        if !remove.isEmpty { object["remove"] = remove }
        if let set { object["set"] = items(set) }
        return object
    }

    /// Lines as one command's payload for another shard's leader (issue 32):
    /// `{"instance-lines": [LINE, ...]}`.
    package static func payload(_ lines: [InstanceLines]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: ["instance-lines": lines.map(\.object)], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The lines of a `payload`, or nil for a payload that is not one (an operator's request).
    package static func lines(ofPayload text: String) -> [InstanceLines]? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let items = object["instance-lines"] as? [[String: Any]] else { return nil }
        return items.compactMap { try? read($0).get() }
    }

    package struct BadLine: Error, Sendable, Hashable {
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

/// A template's list of instances from its `instances:` file. Every two compare equal: the
/// list is applied as a set (a diff), never taken for a change of the template's definition.
package struct InstanceSource: Sendable, Hashable {
    package var records: [InstanceRecord]

    package init(_ records: [InstanceRecord]) { self.records = records }

    package static func == (a: InstanceSource, b: InstanceSource) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
