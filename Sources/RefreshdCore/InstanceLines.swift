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
    /// `{"instance-lines": [LINE, ...]}`, each line as `object` writes it (keys sorted).
    ///
    /// Written byte by byte (`StrictJSON`'s string escaping): `JSONSerialization` of a
    /// 4,000-key request was 31% of the receiving node's CPU at 1,000,000 instances.
    package static func payload(_ lines: [InstanceLines]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(32 + lines.reduce(0) { $0 + 24 * ($1.add.count + $1.remove.count + ($1.set?.count ?? 0)) })
        out += #"{"instance-lines":["#.utf8
        for (n, line) in lines.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            line.write(into: &out)
        }
        out += "]}".utf8
        return String(decoding: out, as: UTF8.self)
    }

    /// `object`'s text: `{"add":[...],"instances":T,"remove":[...],"set":[...]}`.
    func write(into out: inout [UInt8]) {
        func records(_ name: String, _ records: [InstanceRecord]) {
            StrictJSON.appendString(name, to: &out)
            out += ":[".utf8
            for (n, record) in records.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                var members = record.values.filter { $0.key != "key" }.map { ($0.key, $0.value) }
                members.append(("key", record.key))
                members.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
                out.append(UInt8(ascii: "{"))
                for (m, (name, value)) in members.enumerated() {
                    if m > 0 { out.append(UInt8(ascii: ",")) }
                    StrictJSON.appendString(name, to: &out)
                    out.append(UInt8(ascii: ":"))
                    StrictJSON.appendString(value, to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "{"))
        if !add.isEmpty {
            records("add", add)
            out.append(UInt8(ascii: ","))
        }
        StrictJSON.appendString("instances", to: &out)
        out.append(UInt8(ascii: ":"))
        StrictJSON.appendString(template, to: &out)
        if !remove.isEmpty {
            out += #","remove":["#.utf8
            for (n, key) in remove.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                StrictJSON.appendString(key, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        if let set {
            out.append(UInt8(ascii: ","))
            records("set", set)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The lines of a `payload`, or nil for a payload that is not one (an operator's request).
    /// A payload `payload` wrote is read by `StrictJSON` (`fastLines`); anything else by
    /// Foundation and `read`, whose rules stay the reference.
    package static func lines(ofPayload text: String) -> [InstanceLines]? {
        if let lines = fastLines(text) { return lines }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let items = object["instance-lines"] as? [[String: Any]] else { return nil }
        return items.compactMap { try? read($0).get() }
    }

    /// The fast path of `lines(ofPayload:)`: nil unless every line is of the shape `read` takes
    /// whole (a template, and lists of keys or objects of strings with a key, something to do).
    static func fastLines(_ text: String) -> [InstanceLines]? {
        guard let members = StrictJSON.object(text), members.count == 1, members[0].key == "instance-lines",
              case let .array(items) = members[0].value else { return nil }
        var lines: [InstanceLines] = []
        lines.reserveCapacity(items.count)
        for item in items {
            guard case let .object(fields) = item,
                  let template = fields.first(where: { $0.key == "instances" }).flatMap({ field -> String? in
                      if case let .string(text) = field.value { text } else { nil }
                  }), !template.isEmpty else { return nil }
            var line = InstanceLines(template: template)
            func records(_ value: StrictJSON.Value) -> [InstanceRecord]? {
                guard case let .array(values) = value else { return nil }
                var found: [InstanceRecord] = []
                found.reserveCapacity(values.count)
                for value in values {
                    switch value {
                    case let .string(key):
                        found.append(InstanceRecord(template: template, key: key, values: [:]))
                    case let .object(members):
                        var key: String?
                        var values: [String: String] = [:]
                        for member in members {
                            guard case let .string(text) = member.value else { return nil }
                            if member.key == "key" { key = text } else { values[member.key] = text }
                        }
                        guard let key else { return nil }
                        found.append(InstanceRecord(template: template, key: key, values: values))
                    default: return nil
                    }
                }
                return found
            }
            for field in fields {
                switch field.key {
                case "instances": continue
                case "add": guard let add = records(field.value) else { return nil }; line.add = add
                case "remove": guard let remove = records(field.value) else { return nil }; line.remove = remove.map(\.key)
                case "set": guard let set = records(field.value) else { return nil }; line.set = set
                default: continue
                }
            }
            guard !line.add.isEmpty || !line.remove.isEmpty || line.set != nil else { return nil }
            lines.append(line)
        }
        return lines
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
