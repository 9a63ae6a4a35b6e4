import Testing
@testable import RefreshdConfig

/// Alias bombs and deep nesting are refused at the offending alias or level, before anything
/// expands them, and fast: every case here must finish in well under a second.
@Suite struct AliasBombTests {
    /// `a0` is one scalar, each `aN` a list of ten `a(N-1)`: `a9` names 10^9 scalars in under 1 KB.
    static func bombAnchors(flow: Bool = true) -> String {
        var yaml = "identifier: com.example.bomb\ncommand: [true]\nx0: &a0 lol\n"
        for level in 1...9 {
            let items = Array(repeating: "*a\(level - 1)", count: 10)
            if flow {
                yaml += "x\(level): &a\(level) [\(items.joined(separator: ", "))]\n"
            } else {
                yaml += "x\(level): &a\(level)\n" + items.map { "  - \($0)\n" }.joined()
            }
        }
        return yaml
    }

    /// The errors of `yaml`, checking that parsing took less than half a second.
    func timedErrors(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> [ConfigError] {
        let clock = ContinuousClock()
        var errors: [ConfigError] = []
        let elapsed = clock.measure { errors = TestSupport.errors(yaml, sourceLocation: sourceLocation) }
        #expect(elapsed < .milliseconds(500), "parsing took \(elapsed)", sourceLocation: sourceLocation)
        return errors
    }

    /// The bomb is refused at the alias that would cross the value budget (in the definition of
    /// a4, whose 10 copies of a3 make 11,111 values), whatever uses a9 afterwards.
    func expectRefusedAtTheBudget(_ errors: [ConfigError], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(errors.count == 1, "\(errors)", sourceLocation: sourceLocation)
        guard let error = errors.first else { return }
        #expect(error.message.hasPrefix("alias *a3 would expand the file to more than 10000 values"), sourceLocation: sourceLocation)
        #expect(error.line == 7, sourceLocation: sourceLocation)
    }

    @Test func bombAsAKeyIsRefusedAtOnce() {
        expectRefusedAtTheBudget(timedErrors(Self.bombAnchors() + "? *a9\n: value\n"))
    }

    @Test func bombAsAValueIsRefusedAtOnce() {
        expectRefusedAtTheBudget(timedErrors(Self.bombAnchors() + "environment: *a9\n"))
    }

    @Test func bombInFlowStyleIsRefusedAtOnce() {
        var yaml = "{identifier: com.example.bomb, command: [true], x0: &a0 lol"
        for level in 1...9 {
            yaml += ", x\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ",") + "]"
        }
        yaml += ", ? *a9 : v}"
        let errors = timedErrors(yaml)
        #expect(errors.count == 1)
        #expect(errors.first?.line == 1)
        #expect(errors.first?.message.contains("would expand the file to more than 10000 values") == true)
    }

    @Test func bombInBlockStyleIsRefusedAtTheAlias() {
        let errors = timedErrors(Self.bombAnchors(flow: false) + "? *a9\n: value\n")
        #expect(errors.count == 1)
        // x4's list starts after the 3 + 11 * 3 lines of x0..x3; its tenth item crosses the budget.
        #expect(errors.first?.message.hasPrefix("alias *a3 would expand") == true)
        #expect(errors.first.map { $0.column == 5 } == true)
    }

    @Test func keyThatNamesASmallListIsJustNotASettingName() {
        // Under the budget: composed, then refused as a key like any list would be.
        var yaml = "identifier: com.example.keys\ncommand: [true]\nx0: &a0 lol\n"
        yaml += "x1: &a1 [*a0, *a0, *a0]\n? *a1\n: value\n"
        let errors = timedErrors(yaml)
        #expect(errors.contains { $0.position == "5:3" && $0.message.hasPrefix("expected a setting name") })
    }

    @Test func tooManyAliasesAreRefused() {
        let items = Array(repeating: "*v", count: 150).joined(separator: ", ")
        let errors = timedErrors("identifier: com.example.x\ncommand: [true, &v a, \(items)]\n")
        #expect(errors.count == 1)
        #expect(errors.first?.message == "alias *v is one alias too many; expected at most 100 aliases in a job file")
    }

    @Test func deepFlowNestingIsRefusedAtTheLevelPastTheLimit() {
        let errors = timedErrors("identifier: com.example.x\ncommand: " + String(repeating: "[", count: 40)
            + String(repeating: "]", count: 40) + "\n")
        #expect(errors.count == 1)
        // command's value is level 2 (the root mapping is 1); the 33rd level opens at column 41.
        #expect(errors.first?.position == "2:41")
        #expect(errors.first?.message.hasPrefix("values are nested more than 32 levels deep") == true)
    }

    @Test func thousandsOfBracketsAreRefusedAtTheFirst() {
        // Debian's libyaml (0.2.5) has no nesting limit of its own and does not recurse: the
        // composer refuses the 33rd level as it arrives, as for 40 (the same message either way).
        let errors = timedErrors("identifier: com.example.x\ncommand: " + String(repeating: "[", count: 5000)
            + String(repeating: "]", count: 5000) + "\n")
        #expect(errors.count == 1)
        #expect(errors.first?.position == "2:41")
        #expect(errors.first?.message.hasPrefix("values are nested more than 32 levels deep") == true)
        #expect(errors.first?.message.contains("yaml_set_max_nest_level") == false)
    }

    @Test func deepBlockNestingIsRefused() {
        var yaml = "identifier: com.example.x\ncommand: [true]\n"
        for depth in 0..<40 { yaml += String(repeating: "  ", count: depth) + "k\(depth):\n" }
        let errors = timedErrors(yaml)
        #expect(errors.count == 1)
        #expect(errors.first?.message.hasPrefix("values are nested more than 32 levels deep") == true)
    }

    @Test func aliasThatWouldNestTooDeepIsRefused() {
        let deep = String(repeating: "[", count: 20) + "x" + String(repeating: "]", count: 20)
        let wrapped = String(repeating: "[", count: 20) + "*d" + String(repeating: "]", count: 20)
        let errors = timedErrors("identifier: com.example.x\ncommand: [true]\na: &d \(deep)\nb: \(wrapped)\n")
        #expect(errors.count == 1)
        #expect(errors.first?.position == "4:24")
        #expect(errors.first?.message.hasPrefix("values are nested more than 32 levels deep") == true)
    }

    @Test func aliasInsideItsOwnAnchorIsRefused() {
        let errors = timedErrors("identifier: com.example.x\ncommand: &c [true, *c]\n")
        #expect(errors.first?.position == "2:20")
        #expect(errors.first?.message.hasPrefix("alias *c is inside the value anchored &c it names") == true)
    }

    @Test func modestAnchorsAndAliasesStillWork() throws {
        let config = try #require(TestSupport.config("""
            identifier: com.example.anchors
            command: [env, &greeting hello]
            environment: {A: *greeting, B: *greeting}
            """))
        #expect(config.environment == ["A": "hello", "B": "hello"])
        #expect(config.command == ["/usr/bin/env", "hello"])
    }
}
