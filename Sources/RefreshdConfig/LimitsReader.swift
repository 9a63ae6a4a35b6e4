import RefreshdCore

/// Reads a job file's `limits:` (issue 35) into `JobLimits`, every problem at its value.
///
/// ```yaml
/// limits: {memory: 256M, cpu: 50%, tasks: 64, nice: 10, io-weight: 50}
/// ```
enum LimitsReader {
    static let keys = ["memory", "cpu", "tasks", "nice", "io-weight"]
    static let sizeExpected = "a size like 256M or 1G (bytes, or K, M, G, T: powers of 1024), from 1M to 1024T"
    static let cpuExpected = "a percentage of one CPU like 50% or 200%, a whole number from 1% to 10000%"

    /// The limits, or nil with every problem reported.
    static func read(_ reader: ValueReader, _ sink: inout ErrorSink) -> JobLimits? {
        guard let pairs = reader.mapping(known: keys, &sink) else { return nil }
        let before = sink.errors.count
        var limits = JobLimits()
        for pair in pairs {
            let value = ValueReader(key: "limits." + pair.key, node: pair.value)
            switch pair.key {
            case "memory": limits.memoryBytes = size(value, &sink)
            case "cpu": limits.cpuPercent = cpu(value, &sink)
            case "tasks": limits.tasks = value.integer(in: 1...4_194_304, &sink)
            case "nice": limits.nice = value.integer(in: -20...19, &sink)
            case "io-weight": limits.ioWeight = value.integer(in: 1...10_000, &sink)
            default: break
            }
        }
        return sink.errors.count == before ? limits : nil
    }

    /// `256M`: bytes, or a whole number with K, M, G or T (powers of 1024), 1M to 1024T.
    static func size(_ reader: ValueReader, _ sink: inout ErrorSink) -> Int64? {
        guard let text = reader.string(&sink, expected: sizeExpected) else { return nil }
        if let bytes = parseSize(text), bytes >= 1 << 20, bytes <= 1 << 50 { return bytes }
        sink.add(at: reader.node.location, "\(reader.key): expected \(sizeExpected), found \(EchoText.quoted(text))")
        return nil
    }

    /// The bytes `text` names (`512`, `64K`, `256M`, `1G`, `2T`), nil for anything else.
    static func parseSize(_ text: String) -> Int64? {
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let shift = ["K": 10, "M": 20, "G": 30, "T": 40][String(last)] {
            unit = 1 << shift
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              digits.utf8.count <= 16, let number = Int64(digits) else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }

    /// `50%`: a whole percentage of one CPU, 1% to 10000%.
    static func cpu(_ reader: ValueReader, _ sink: inout ErrorSink) -> Int? {
        guard let text = reader.string(&sink, expected: cpuExpected) else { return nil }
        if text.hasSuffix("%"), !text.hasPrefix("+"), let value = Int(text.dropLast()), (1...10_000).contains(value) {
            return value
        }
        sink.add(at: reader.node.location, "\(reader.key): expected \(cpuExpected), found \(EchoText.quoted(text))")
        return nil
    }
}
