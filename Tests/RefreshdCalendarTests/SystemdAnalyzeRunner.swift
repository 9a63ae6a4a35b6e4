import Foundation

/// Runs the real `systemd-analyze calendar` (the reference implementation) and parses its
/// output: per expression, the normalized form and the UTC instants, or a parse failure.
struct SystemdAnalyzeRunner {
    static let path = "/usr/bin/systemd-analyze"

    struct Result: Equatable {
        var normalized: String?
        var instants: [Date]
        var failed: Bool
        /// systemd parsed the expression but gave up computing an elapse (its 1000-step limit).
        var gaveUp = false
    }

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// Evaluates several expressions in one process (`TZ=zone`, `--base-time=@epoch`).
    static func run(_ expressions: [String], zone: String, base: Date, iterations: Int) throws -> [String: Result] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["calendar", "--iterations=\(iterations)",
                             "--base-time=@\(Int(base.timeIntervalSince1970))"] + expressions
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = zone
        environment["SYSTEMD_COLORS"] = "0"
        environment["LC_ALL"] = "C"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return parse(stdout: stdout, stderr: stderr)
    }

    /// Each parsed expression gets a stdout block ("Original form:" is omitted when it equals
    /// the normalized form); failures are named on stderr.
    static func parse(stdout: String, stderr: String) -> [String: Result] {
        var failed = Set<String>()
        var gaveUp = Set<String>()
        for line in stderr.split(separator: "\n") {
            guard let close = line.range(of: "': ", options: .backwards) else { continue }
            if let open = line.range(of: "specification '") {
                failed.insert(String(line[open.upperBound..<close.lowerBound]))
            } else if let open = line.range(of: "next elapse for '") {
                gaveUp.insert(String(line[open.upperBound..<close.lowerBound]))
            }
        }
        var results: [String: Result] = [:]
        for expression in failed { results[expression] = Result(normalized: nil, instants: [], failed: true) }
        for expression in gaveUp { results[expression] = Result(normalized: nil, instants: [], failed: false, gaveUp: true) }
        var original: String?
        var current: String?
        var local: [Date] = []
        var utc: [Date] = []
        func flush() {
            guard let current else { return }
            results[current]?.instants = utc.isEmpty ? local : utc
        }
        for raw in stdout.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Original form: ") {
                original = String(raw.drop(while: { $0 == " " }).dropFirst("Original form: ".count))
            } else if line.hasPrefix("Normalized form: ") {
                flush()
                let normalized = String(line.dropFirst("Normalized form: ".count))
                current = original ?? normalized
                original = nil
                results[current!] = Result(normalized: normalized, instants: [], failed: false)
                local = []
                utc = []
            } else if line.hasPrefix("(in UTC): "), let date = parseUTC(line.dropFirst("(in UTC): ".count)) {
                utc.append(date)
            } else if line.hasPrefix("Next elapse: ") || line.hasPrefix("Iter. #"),
                      let colon = line.firstIndex(of: ":"), let date = parseUTC(line[line.index(colon, offsetBy: 2)...]) {
                local.append(date)
            }
        }
        flush()
        return results
    }

    /// Parses `Sat 2026-11-21 04:00:00 UTC` (nil unless it ends in UTC).
    static func parseUTC(_ text: Substring) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 4, parts[3] == "UTC" else { return nil }
        let ymd = parts[1].split(separator: "-").compactMap { Int($0) }
        let hms = parts[2].split(separator: ":").compactMap { Int($0) }
        guard ymd.count == 3, hms.count == 3 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: ymd[0], month: ymd[1], day: ymd[2],
                                                  hour: hms[0], minute: hms[1], second: hms[2]))
    }
}
