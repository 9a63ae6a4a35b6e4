import Foundation
import RefreshdCore

/// A template's `instances: FILE` (issue 23): the complete list of its instances, read with the
/// job file (on the daemon's reading thread) and applied as a set at each load and reload, so a
/// file kept in the jobs folder is watched like the job files.
///
/// - A plain file holds one key per line (a template of one parameter); blank lines and lines
///   starting with `#` are skipped.
/// - A `.csv` file starts with a header naming every parameter (and optionally `key`); each row
///   gives their values, comma-separated, no quoting (values are of the key alphabet, which has
///   no comma). Without a `key` column the key is the values joined by `.` in header order.
///
/// Every problem is an error at the list file's line and column.
enum InstanceSourceFile {
    /// The largest list read: 64 MiB (a million keys of 60 bytes).
    static let maximumSize = 64 << 20

    /// `widgetKind`: a timeline template's kind pattern: each row's values must make a kind, a
    /// kind of its own (`InstanceKind`), or the row is an error at its line.
    static func read(path: String, template: String, parameters: [String], widgetKind: String? = nil,
                     _ sink: inout ErrorSink) -> [InstanceRecord]? {
        var own = ErrorSink(file: path)
        defer { sink.append(contentsOf: own) }
        guard let lines = contentLines(path, &own) else { return nil }
        let csv = path.hasSuffix(".csv")
        if !csv, parameters.count != 1 {
            own.add(1, 1, "instances: a list of keys fits a template of one parameter, this one has \(parameters.count) "
                + "(\(parameters.joined(separator: ", "))); expected a .csv file with a header of parameter names")
            return nil
        }
        var columns: [String] = parameters
        var rows = lines[...]
        if csv {
            guard let header = rows.first else {
                own.add(1, 1, "instances: expected a header of parameter names (\(parameters.joined(separator: ",")))")
                return nil
            }
            rows = rows.dropFirst()
            guard let named = Self.columns(header, parameters: parameters, &own) else { return nil }
            columns = named
        }
        let records = Self.records(rows, columns: columns, csv: csv, template: template, parameters: parameters,
                                   widgetKind: widgetKind, &own)
        return own.errors.isEmpty ? records : nil
    }

    /// The file's lines that hold something (not blank, not a `#` comment), numbered from 1;
    /// nil when it cannot be read or is over `maximumSize`.
    static func contentLines(_ path: String, _ own: inout ErrorSink) -> [(number: Int, text: Substring)]? {
        guard let data = FileManager.default.contents(atPath: path) else {
            own.add(1, 1, "instances: cannot read the file (missing, unreadable or not a regular file); expected a list of keys, one a line")
            return nil
        }
        guard data.count <= maximumSize else {
            own.add(1, 1, "instances: the file is \(data.count) bytes; expected at most \(maximumSize) bytes (64 MiB)")
            return nil
        }
        // Split on the byte: as Characters, "\r\n" is one and would not split on "\n".
        var lines: [(number: Int, text: Substring)] = []
        for (index, raw) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let bytes = raw.last == 0x0D ? raw.dropLast() : raw
            let line = Substring(String(decoding: bytes, as: UTF8.self))
            if line.isEmpty || line.hasPrefix("#") { continue }
            lines.append((index + 1, line))
        }
        return lines
    }

    /// A `.csv` header's column names: each a parameter or `key`, every parameter named; nil
    /// (with an error at each wrong column) otherwise.
    static func columns(_ header: (number: Int, text: Substring), parameters: [String], _ own: inout ErrorSink) -> [String]? {
        let columns = header.text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var column = 1
        for name in columns {
            if name != "key", !parameters.contains(name) {
                own.add(header.number, column, "instances: unknown column \(EchoText.quoted(name)); expected the parameters \(parameters.joined(separator: ", ")) (and optionally key)")
            }
            column += name.unicodeScalars.count + 1
        }
        for name in parameters where !columns.contains(name) {
            own.add(header.number, 1, "instances: the header has no column \(name); expected every parameter (\(parameters.joined(separator: ", ")))")
        }
        guard own.errors.isEmpty else { return nil }
        return columns
    }

    /// The rows as instances: each value of the key alphabet, each key once, and with
    /// `widgetKind` each row's values making a kind of its own; a wrong row is an error at its line.
    static func records(_ rows: ArraySlice<(number: Int, text: Substring)>, columns: [String], csv: Bool, template: String,
                        parameters: [String], widgetKind: String?, _ own: inout ErrorSink) -> [InstanceRecord] {
        var records: [InstanceRecord] = []
        var seen = Set<String>()
        var kinds: [String: String] = [:]
        for row in rows {
            let fields = csv ? row.text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                : [row.text.trimmingCharacters(in: .whitespaces)]
            guard fields.count == columns.count else {
                own.add(row.number, 1, "instances: \(fields.count) values; expected \(columns.count) (\(columns.joined(separator: ",")))")
                continue
            }
            var values: [String: String] = [:]
            var key: String?
            var column = 1
            var valid = true
            for (name, value) in zip(columns, fields) {
                if let problem = InstanceName.keyProblem(value, what: name == "key" || !csv ? "key" : "value") {
                    own.add(row.number, column, "instances: \(problem)")
                    valid = false
                }
                if name == "key" { key = value } else { values[name] = value }
                column += value.unicodeScalars.count + 1
            }
            guard valid else { continue }
            let k = key ?? parameters.map { values[$0] ?? "" }.joined(separator: ".")
            if let problem = InstanceName.keyProblem(k) {
                own.add(row.number, 1, "instances: \(problem)")
                continue
            }
            guard seen.insert(k).inserted else {
                own.add(row.number, 1, "instances: the key \(EchoText.quoted(k)) is listed twice; expected each instance once")
                continue
            }
            if let widgetKind {
                let filled = values.isEmpty && parameters.count == 1 ? [parameters[0]: k] : values
                switch InstanceKind.fill(widgetKind, filled) {
                case let .failure(problem):
                    own.add(row.number, 1, "instances: \(InstanceName.identifier(template: template, key: k)): \(problem.message)")
                    continue
                case let .success(kind):
                    if let other = kinds[kind] {
                        own.add(row.number, 1, "instances: \(InstanceName.identifier(template: template, key: k)): its widget kind "
                            + "\(EchoText.quoted(kind)) is already \(InstanceName.identifier(template: template, key: other))'s "
                            + "(\(InstanceKind.derivation)); expected values that make a kind of its own")
                        continue
                    }
                    kinds[kind] = k
                }
            }
            records.append(InstanceRecord(template: template, key: k, values: values))
        }
        return records
    }
}
