import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// A bounded, deterministic fuzz of the job-file parser: structure-aware and byte-level mutations
/// of the shipped examples (`Jobs/*.yaml`) and the alias-bomb shapes. Every parse must end
/// quickly, every error must be located inside the file and fit on one line, every accepted
/// duration must be within `DurationParser.maximum`, and every accepted job must run in the
/// scheduling core over simulated time without trapping.
@Suite struct JobFileFuzzTests {
    /// SplitMix64: small, fast, and the same sequence on every machine.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let projectRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let examples: [String] = {
        let jobs = projectRoot + "/Jobs"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: jobs)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
        return names.compactMap { try? String(contentsOfFile: jobs + "/" + $0, encoding: .utf8) }
    }()

    static let durationKeys = ["allowance", "grace", "jitter", "accuracy", "catch-up"]
    static let interestingValues = [
        "106751991167d", "9223372036854775807ms", "36500d", "36501d", "153722867280912m", "0s", "1ms", "-1s",
        "99999999999999999999999", "+9223372036854774s", "+36500d", "+36501d", "+0s", "1h30m", "1m1h",
        "\"date\\0junk\"", "\"a\\u001B[31m\\nb\"", "\"\\t\\r\"", "!x 5s", "!!str 5s", "!!int 5", "~", "[]", "{}",
        "[true, \"\\0\"]", "{after: 153722867280912m}", "{after: 36500d}", "{calendar: \"*-*-* 04:00\", timezone: \"UTC\\0x\"}",
        "{calendar: \"Mon..Fri\n  25:00\"}", "{backoff: linear, initial: 36500d, max: 36500d, limit: 99999999999}",
        "{backoff: exponential, initial: 106751991167d, max: 106751991167d}", "9999-12-31T23:59:59Z",
        "1969-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "\"*-*-* 04:00\"", "hourly", "\"*-*-* *:*:*\"",
        "Europe/Paris", "\"Europe/Paris\\0\"", "all", "skip", "once", "processing", "app-refresh",
        "[external-power, network]", "{A: \"x\\0\", B: y}", "&a [1, 2]", "*a", "*undefined",
        "'multi\n  line'", "|\n  block\n  text", ">\n  folded\n  25:00",
    ]
    static let extraKeys = ["earliest", "allowance", "grace", "resubmit", "retry", "requires", "namespace",
                            "environment", "timezone", "missed", "catch-up", "jitter", "fixed-jitter", "accuracy", "kind"]

    static func nested(_ depth: Int, flow: Bool) -> String {
        flow ? String(repeating: "[", count: depth) + "x" + String(repeating: "]", count: depth)
            : (0..<depth).map { String(repeating: "  ", count: $0 + 1) + "k\($0):" }.joined(separator: "\n")
    }

    static func bomb(levels: Int, asKey: Bool, flow: Bool) -> String {
        var yaml = "x0: &a0 lol\n"
        for level in 1...levels {
            let items = Array(repeating: "*a\(level - 1)", count: 10)
            yaml += flow ? "x\(level): &a\(level) [\(items.joined(separator: ","))]\n"
                : "x\(level): &a\(level)\n" + items.map { "  - \($0)\n" }.joined()
        }
        return yaml + (asKey ? "? *a\(levels)\n: v\n" : "environment: *a\(levels)\n")
    }

    /// One structure-aware mutation of `lines` (top-level `key: value` lines and their continuations).
    static func mutate(_ lines: inout [String], _ rng: inout SeededGenerator) {
        func pickLine() -> Int { Int.random(in: 0..<max(lines.count, 1), using: &rng) }
        func split(_ line: String) -> (key: String, value: String)? {
            guard let colon = line.range(of: ": "), !line.hasPrefix("#"), !line.hasPrefix(" ") else { return nil }
            return (String(line[..<colon.lowerBound]), String(line[colon.upperBound...]))
        }
        guard !lines.isEmpty else { lines = ["identifier: a.b"]; return }
        switch Int.random(in: 0..<13, using: &rng) {
        case 0:  // swap the values of two keys
            let (i, j) = (pickLine(), pickLine())
            if let a = split(lines[i]), let b = split(lines[j]) {
                lines[i] = a.key + ": " + b.value
                lines[j] = b.key + ": " + a.value
            }
        case 1, 2:  // an interesting value for an existing or a new key
            let value = interestingValues.randomElement(using: &rng)!
            if Bool.random(using: &rng), let line = split(lines[pickLine()]) {
                lines.append(line.key + ": " + value)
                lines.removeAll { $0.hasPrefix(line.key + ": ") && $0 != line.key + ": " + value }
            } else {
                lines.append(extraKeys.randomElement(using: &rng)! + ": " + value)
            }
        case 3:  // a huge or edge duration in a duration field
            let key = durationKeys.randomElement(using: &rng)!
            let value = ["106751991167d", "36500d", "36501d", "0s", "\(UInt64.random(in: 0...UInt64.max, using: &rng))ms",
                         "\(Int.random(in: 0...200_000, using: &rng))d"].randomElement(using: &rng)!
            lines.removeAll { $0.hasPrefix(key + ":") }
            lines.append(key + ": " + value)
            if key == "catch-up" { lines.removeAll { $0.hasPrefix("missed:") }; lines.append("missed: all") }
        case 4:  // NUL or a control character inside a value
            let i = pickLine()
            if let line = split(lines[i]) {
                let control = ["\\0", "\\e", "\\n", "\\t", "\\x7F", "\\u2028", "\\x9B"].randomElement(using: &rng)!
                lines[i] = line.key + ": \"" + line.value.replacingOccurrences(of: "\"", with: "") + control + "\""
            }
        case 5:  // a tag
            let i = pickLine()
            let tag = ["!x ", "!!str ", "!!int ", "!<tag:x> ", "! "].randomElement(using: &rng)!
            lines[i] = Bool.random(using: &rng) ? tag + lines[i]
                : lines[i].replacingOccurrences(of: ": ", with: ": " + tag, options: [], range: lines[i].range(of: ": "))
        case 6:  // an anchor and an alias
            let (i, j) = (pickLine(), pickLine())
            if let a = split(lines[i]), let b = split(lines[j]) {
                lines[i] = a.key + ": &x " + a.value
                lines[j] = b.key + ": *x"
            }
        case 7:  // deep nesting
            let depth = Int.random(in: 1...60, using: &rng)
            let flow = Bool.random(using: &rng)
            lines.append("environment:" + (flow ? " " + nested(depth, flow: true) : "\n" + nested(depth, flow: false)))
        case 8:  // a duplicated key
            let i = pickLine()
            lines.insert(lines[i], at: pickLine())
        case 9:  // bad indentation: spaces or a tab
            let i = pickLine()
            lines[i] = [" ", "  ", "\t", "   "].randomElement(using: &rng)! + lines[i]
        case 10:  // a bomb shape
            lines += bomb(levels: Int.random(in: 2...9, using: &rng), asKey: Bool.random(using: &rng),
                          flow: Bool.random(using: &rng)).split(separator: "\n").map(String.init)
        case 11:  // delete a line
            lines.remove(at: pickLine())
        default:  // a long value
            let i = pickLine()
            if let line = split(lines[i]) {
                lines[i] = line.key + ": " + String(repeating: line.value, count: Int.random(in: 2...2000, using: &rng))
            }
        }
    }

    /// One byte-level mutation.
    static func mutateBytes(_ bytes: inout [UInt8], _ rng: inout SeededGenerator) {
        guard !bytes.isEmpty else { bytes = [UInt8.random(in: 0...255, using: &rng)]; return }
        let i = Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: bytes[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
        case 1: bytes.insert([0, 9, 10, 13, 27, 0x7F, 0xC3, 0xFF, 0x22, 0x27, 0x3A, 0x5B, 0x7B, 0x26, 0x2A].randomElement(using: &rng)!, at: i)
        case 2: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...20, using: &rng)))
        case 3:
            let end = min(bytes.count, i + Int.random(in: 1...40, using: &rng))
            bytes.insert(contentsOf: bytes[i..<end], at: Int.random(in: 0...bytes.count, using: &rng))
        default: bytes[i] = UInt8.random(in: 0...255, using: &rng)
        }
    }

    /// Checks one file's outcome; returns the job when it was accepted.
    static func check(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> JobConfig? {
        let clock = ContinuousClock()
        var result: Result<JobConfig, ConfigErrors>!
        let elapsed = clock.measure {
            result = JobDirectory.parse(yaml: yaml, file: "Jobs/fuzz.yaml", projectRoot: projectRoot,
                                        searchPath: TestSupport.searchPath, now: TestSupport.now,
                                        timeZone: TestSupport.machineZone)
        }
        #expect(elapsed < .seconds(1), "parse took \(elapsed): \(EchoText.quoted(yaml, limit: 300))", sourceLocation: sourceLocation)
        let lineCount = yaml.split(separator: "\n", omittingEmptySubsequences: false).count
        switch result! {
        case .failure(let errors):
            #expect(!errors.errors.isEmpty && errors.errors.count <= JobFileLimits.maximumErrorsPerFile + 1, sourceLocation: sourceLocation)
            for error in errors.errors {
                let located = error.line >= 1 && error.column >= 1 && error.line <= lineCount + 1
                #expect(located, "\(error) in \(EchoText.quoted(yaml, limit: 300))", sourceLocation: sourceLocation)
                let oneLine = !error.description.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
                #expect(oneLine, "\(EchoText.quoted(error.description, limit: 300))", sourceLocation: sourceLocation)
            }
            return nil
        case .success(let config):
            let d = config.definition
            var durations = [d.allowance, d.grace, d.catchUp, d.jitter, d.accuracy]
            if case .after(let after) = d.resubmit { durations.append(after) }
            if let retry = d.retry { durations += [retry.initial, retry.maximum] }
            if case .relative(let earliest) = config.earliest { durations.append(earliest) }
            #expect(durations.allSatisfy { $0 >= .zero && $0 <= DurationParser.maximum },
                    "\(durations) in \(EchoText.quoted(yaml, limit: 300))", sourceLocation: sourceLocation)
            if case .absolute(let instant) = config.earliest {
                #expect(instant >= Instant(milliseconds: -86_400_000) && instant <= Instant(milliseconds: 253_402_300_800_000),
                        sourceLocation: sourceLocation)
            }
            return config
        }
    }

    /// Runs an accepted job in the core for `steps` wake-ups: runs finish alternately with
    /// success, failure and exit 1, with a clock step every few wake-ups.
    static func drive(_ config: JobConfig, steps: Int = 50, _ rng: inout SeededGenerator) throws {
        var core = SchedulerCore(configuration: SchedulerConfiguration(seed: 42), definitions: [config.definition])
        var now = TestSupport.now
        var effects: [SchedulerEffect] = []
        if config.earliest == .relative(.zero) {
            try core.submitFirst(config.identifier, at: now, into: &effects)
        } else {
            effects = try core.submit(TaskRequest(identifier: config.identifier, kind: config.definition.kind,
                                                  earliestBeginDate: config.earliest.instant(loadedAt: now)), at: now)
        }
        var finished = 0
        for step in 0..<steps {
            var events: [SchedulerEvent] = []
            for effect in effects {
                switch effect {
                case .launch(let order):
                    let exit: RunExit = [.exited(0), .signaled(9), .exited(1)][finished % 3]
                    finished += 1
                    events.append(.runFinished(runID: order.runID, exit: exit))
                case .watchConditions(true):
                    events.append(.conditionsChanged(Conditions(externalPower: true, network: true)))
                default:
                    break
                }
            }
            effects = []
            for event in events { effects += core.handle(event, at: now) }
            if !events.isEmpty { continue }
            if step % 7 == 6 {
                // The wall clock jumps by up to a day either way.
                let jump = Int64.random(in: -86_400_000...86_400_000, using: &rng)
                let expected = now
                now = Instant(milliseconds: now.milliseconds + jump)
                effects = core.handle(.clockChanged(expected: expected), at: now)
                continue
            }
            guard let wake = core.nextWakeUp else { break }
            now = max(now, wake)
            effects = core.handle(.timerFired, at: now)
        }
    }

    @Test func mutatedExamplesAreHandledSafely() throws {
        #expect(Self.examples.count >= 5, "the examples in Jobs/ were not found")
        var rng = SeededGenerator(state: 0x5EED_0F_2026)
        var accepted = 0, refused = 0
        for iteration in 0..<1200 {
            let seed = Self.examples[iteration % Self.examples.count]
            var lines = seed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for _ in 0..<Int.random(in: 1...4, using: &rng) { Self.mutate(&lines, &rng) }
            var yaml = lines.joined(separator: "\n")
            if iteration % 3 == 0 {
                var bytes = Array(yaml.utf8)
                for _ in 0..<Int.random(in: 1...3, using: &rng) { Self.mutateBytes(&bytes, &rng) }
                yaml = String(decoding: bytes, as: UTF8.self)
            }
            if let config = Self.check(yaml) {
                accepted += 1
                try Self.drive(config, &rng)
            } else {
                refused += 1
            }
        }
        // Both outcomes are exercised, so the properties above are about something.
        #expect(accepted > 50)
        #expect(refused > 300)
    }

    @Test func unmutatedExamplesAreAcceptedAndRun() throws {
        var rng = SeededGenerator(state: 1)
        for example in Self.examples {
            let config = try #require(Self.check(example))
            try Self.drive(config, steps: 200, &rng)
        }
    }

    @Test func maximumDurationsEverywhereRunInTheCore() throws {
        var rng = SeededGenerator(state: 7)
        for extra in [
            "kind: processing\nearliest: +36500d\nallowance: 36500d\ngrace: 36500d\nresubmit: {after: 36500d}\n"
                + "retry: {backoff: exponential, initial: 36500d, max: 36500d, limit: 1000}\njitter: 36500d\naccuracy: 36500d\n",
            "allowance: 1ms\ngrace: 0s\nresubmit: {after: 1ms}\nretry: {backoff: linear, initial: 1ms, max: 36500d, limit: 1000}\n",
            "kind: processing\nresubmit: {calendar: \"*-*-* *:*:00\"}\nmissed: all\ncatch-up: 36500d\njitter: 36500d\n"
                + "accuracy: 36500d\nretry: {initial: 36500d, max: 36500d}\n",
            "earliest: 9999-12-31T23:59:59Z\nresubmit: {after: 36500d}\nallowance: 36500d\n",
        ] {
            let config = try #require(Self.check("identifier: com.example.max\ncommand: [true]\n" + extra))
            try Self.drive(config, steps: 200, &rng)
        }
    }

    @Test func bombShapesAreRefusedQuickly() {
        for levels in [4, 6, 9] {
            for asKey in [false, true] {
                for flow in [false, true] {
                    let yaml = "identifier: com.example.bomb\ncommand: [true]\n" + Self.bomb(levels: levels, asKey: asKey, flow: flow)
                    #expect(Self.check(yaml) == nil)
                }
            }
        }
    }

    @Test func byteMutatedFilesLoadedFromDiskAreHandledSafely() {
        var rng = SeededGenerator(state: 99)
        TestSupport.withTemporaryDirectory { root in
            let jobs = root + "/Jobs"
            try? FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
            for iteration in 0..<60 {
                var bytes = Array(Self.examples[iteration % Self.examples.count].utf8)
                for _ in 0..<Int.random(in: 1...6, using: &rng) { Self.mutateBytes(&bytes, &rng) }
                let path = jobs + "/fuzz.yaml"
                _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
                let lineCount = bytes.split(separator: 10, omittingEmptySubsequences: false).count
                if case .failure(let errors) = JobDirectory.load(jobs, searchPath: TestSupport.searchPath,
                                                                 now: TestSupport.now, timeZone: TestSupport.machineZone) {
                    for error in errors.errors {
                        #expect(error.line >= 1 && error.column >= 1 && error.line <= lineCount + 1, "\(error)")
                        #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
                    }
                }
            }
        }
    }
}
