import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Only what is valid is accepted: tags, duplicate keys, NUL, zone names, exec limits, durations.
@Suite struct StrictValueTests {
    let header = "identifier: com.example.strict\ncommand: [true]\n"

    // MARK: Tags and duplicate keys

    @Test func taggedDuplicateKeyIsRefusedAsBoth() {
        let errors = TestSupport.errors(header + "allowance: 5s\n!x allowance: 6s\n")
        #expect(errors.map(\.position) == ["4:1", "4:1"])
        #expect(errors.contains { $0.message.hasPrefix("duplicate key \"allowance\" (first at line 3)") })
        #expect(errors.contains { $0.message.hasPrefix("unsupported tag !x; expected a plain value without a tag") })
    }

    @Test func quotedDuplicateKeyIsADuplicate() {
        let errors = TestSupport.errors(header + "allowance: 5s\n\"allowance\": 6s\n")
        #expect(errors.map(\.message) == ["duplicate key \"allowance\" (first at line 3); each key may appear only once in a mapping"])
    }

    @Test func unsupportedTagsAreLocated() {
        let errors = TestSupport.errors(header + "allowance: !!int 5s\nenvironment: !!set {A: b}\n")
        #expect(errors.map(\.position) == ["3:12", "4:14"])
        #expect(errors.first?.message.hasPrefix("unsupported tag !!int") == true)
        #expect(errors.last?.message.hasPrefix("unsupported tag !!set") == true)
    }

    @Test func tagsThatChangeNothingAreAccepted() throws {
        let config = try #require(TestSupport.config(header + "allowance: !!str 5s\nenvironment: !!map {A: ! b}\nrequires: !!seq []\n"))
        #expect(config.definition.allowance == .seconds(5))
        #expect(config.environment == ["A": "b"])
    }

    @Test func duplicateKeyDoesNotHideOtherErrors() {
        let errors = TestSupport.errors(header + "allowance: 5s\ngrace: soon\nallowance: 6s\nkind: nope\n")
        #expect(errors.map(\.position) == ["4:8", "5:1", "6:7"])
    }

    @Test func duplicatesInsideNestedMappingsAreFound() {
        let errors = TestSupport.errors(header + "environment: {A: x, B: y, A: z}\n")
        #expect(errors.map(\.position) == ["3:27"])
    }

    // MARK: NUL

    @Test(arguments: [
        ("command: [\"date\\0junk\"]\n", "2:11"),
        ("command: [\"true\", \"a\\0b\"]\n", "2:19"),
        ("environment: {A: \"x\\0y\"}\n", "3:18"),
        ("environment: {\"A\\0\": x}\n", "3:15"),
        ("timezone: \"Europe/Paris\\0\"\n", "3:11"),
        ("identifier: \"com.example.a\\0b\"\n", "1:13"),
        ("resubmit: {calendar: \"daily\\0\"}\n", "3:22"),
    ])
    func nulIsRefusedOnce(line: String, position: String) {
        // A second identifier: or command: line duplicates the header's, so put those first.
        let yaml = line.hasPrefix("identifier") ? line + "command: [true]\n"
            : line.hasPrefix("command") ? "identifier: com.example.strict\n" + line
            : header + line
        let errors = TestSupport.errors(yaml)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.position == position)
        #expect(errors.first?.message.hasPrefix("found a NUL character (\\0) in \"") == true)
        #expect(errors.first?.description.contains("\0") == false)
    }

    @Test func zoneNamesAreValidatedOnTheirOwn() {
        // Foundation caches zones and reads names as C strings: a known name followed by NUL or
        // junk must be refused whatever was parsed before.
        #expect(TestSupport.config(header + "timezone: Europe/Paris\n") != nil)
        for zone in ["\"Europe/Paris\\0\"", "\"UTC\\0x\"", "\"UTC\\nx\"", "../etc/passwd", "Europe//Paris", "\"UTC \""] {
            let errors = TestSupport.errors(header + "timezone: \(zone)\n")
            #expect(errors.count == 1, "\(zone): \(errors)")
        }
        #expect(TestSupport.config(header + "timezone: UTC\n") != nil)
    }

    // MARK: Exec limits

    @Test func argumentLongerThanTheKernelTakesIsRefused() {
        let long = String(repeating: "a", count: 131_072)
        let errors = TestSupport.errors("identifier: com.example.strict\ncommand: [true, \(long)]\n")
        #expect(errors.map(\.position) == ["2:17"])
        #expect(errors.first?.message.hasPrefix("command: the argument is 131072 bytes long; expected at most 131071 bytes") == true)
        #expect(TestSupport.config("identifier: com.example.strict\ncommand: [true, \(long.dropLast())]\n") != nil)
    }

    @Test func environmentStringLongerThanTheKernelTakesIsRefused() {
        let long = String(repeating: "v", count: 131_070)  // "A=" + 131,070 bytes = 131,072
        let errors = TestSupport.errors(header + "environment: {A: \(long)}\n")
        #expect(errors.map(\.position) == ["3:18"])
        #expect(errors.first?.message.hasPrefix("environment.A: the variable (NAME=value) is 131072 bytes long") == true)
    }

    @Test func commandAndEnvironmentTogetherMustFitExec() {
        // Aliases make a 120 KB file hold 1.2 MB of arguments.
        let chunk = String(repeating: "x", count: 120_000)
        let copies = Array(repeating: "*c", count: 9).joined(separator: ", ")
        let errors = TestSupport.errors("identifier: com.example.strict\ncommand: [true, &c \(chunk), \(copies)]\n")
        #expect(errors.map(\.position) == ["2:10"])
        #expect(errors.first?.message.contains("expected at most 1048576 bytes (1 MiB)") == true)
    }

    // MARK: Durations

    @Test(arguments: ["allowance: %", "grace: %", "resubmit: {after: %}", "retry: {initial: %, max: %}",
                      "retry: {max: %}", "jitter: %", "accuracy: %", "missed: all\ncatch-up: %", "earliest: +%"])
    func durationsPastTheMaximumAreRefusedEverywhere(template: String) {
        for text in ["36501d", "106751991167d", "153722867280912m", "9223372036854774s", "99999999999999999999999d"] {
            let errors = TestSupport.errors(header + template.replacingOccurrences(of: "%", with: text))
            #expect(!errors.isEmpty && errors.allSatisfy { $0.message.contains("longer than the maximum, 36500d (100 years)") },
                    "\(template) \(text): \(errors)")
            #expect(errors.allSatisfy { $0.line >= 3 })
        }
        let atMaximum = template.replacingOccurrences(of: "%", with: "36500d")
        #expect(TestSupport.config(header + atMaximum) != nil, "\(atMaximum)")
    }

    @Test func maximumIsOneHundredYears() {
        #expect(DurationParser.maximum == .seconds(36_500 * 86_400))
        #expect(DurationParser.format(DurationParser.maximum) == "36500d")
    }

    @Test func absoluteDatesMustBeFrom1970To9999() {
        let errors = TestSupport.errors(header + "earliest: 1969-12-31T23:59:59Z\n")
        #expect(errors.first?.message.contains("the year must be from 1970 to 9999") == true)
        #expect(TestSupport.config(header + "earliest: 9999-12-31T23:59:59Z\n") != nil)
        #expect(TestSupport.config(header + "earliest: 1970-01-01T00:00:00Z\n") != nil)
    }
}
