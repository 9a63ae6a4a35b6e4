import RefreshdCore
import Testing
@testable import RefreshdConfig

@Suite struct JobFileParserTests {
    // MARK: Good files

    @Test func minimalFileGetsDefaults() throws {
        let config = try #require(TestSupport.config("""
            identifier: com.example.refresh
            command: [true]
            """))
        // The namespace defaults to the identifier's app: the identifier without its last label.
        #expect(config.definition == TaskDefinition(identifier: "com.example.refresh", namespace: "com.example"))
        #expect(config.definition.allowance == .seconds(30))
        #expect(config.command == ["/usr/bin/true"])
        #expect(config.earliest == .relative(.zero))
        #expect(config.environment.isEmpty)
        #expect(config.file == "Jobs/test.yaml")
        #expect(config.line == 1)
        #expect(config.projectRoot == "/")
    }

    @Test func fullProcessingFile() throws {
        let config = try #require(TestSupport.config("""
            # Stages tomorrow's wallpaper.
            identifier: design.example.wallpaper.refresh
            kind: processing
            command: ["/bin/sh", "-c", "echo staged"]
            earliest: 2026-11-22T04:00:00+01:00
            allowance: 15m
            grace: 10s
            resubmit: {after: 6h}
            retry:
              backoff: linear
              initial: 1m
              max: 1h
              limit: 3
            requires: [external-power, network]
            namespace: design.example
            environment:
              STAGE_DAY: tomorrow
              PORT: 8080
            """))
        let expected = TaskDefinition(
            identifier: "design.example.wallpaper.refresh", kind: .processing, namespace: "design.example",
            allowance: .seconds(900), grace: .seconds(10), resubmit: .after(.seconds(6 * 3600)),
            retry: RetryPolicy(backoff: .linear, initial: .seconds(60), maximum: .seconds(3600), limit: 3),
            requiresExternalPower: true, requiresNetworkConnectivity: true)
        #expect(config.definition == expected)
        #expect(config.command == ["/bin/sh", "-c", "echo staged"])
        #expect(config.earliest.text == "2026-11-22T03:00:00.000Z")
        #expect(config.environment == ["STAGE_DAY": "tomorrow", "PORT": "8080"])
        #expect(config.line == 2)
    }

    @Test func processingDefaultsAndPartialRetry() throws {
        let config = try #require(TestSupport.config("""
            identifier: com.example.backup
            kind: processing
            command: /bin/sh
            earliest: +10s
            retry: {limit: 0}
            requires: network
            """))
        #expect(config.definition.allowance == .seconds(600))
        #expect(config.definition.retry == RetryPolicy(limit: 0))
        #expect(config.definition.requiresNetworkConnectivity)
        #expect(!config.definition.requiresExternalPower)
        #expect(config.command == ["/bin/sh"])
        #expect(config.earliest == .relative(.seconds(10)))
    }

    @Test func singleStringCommandIsNotSplit() {
        let errors = TestSupport.errors("""
            identifier: com.example.refresh
            command: "true --flag"
            """)
        #expect(errors.map(\.position) == ["2:10"])
        #expect(errors.first?.message.hasPrefix("command: \"true --flag\" was not found on PATH") == true)
    }

    // MARK: Bad files, located

    @Test func misspeltKeySuggestsTheClosest() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            allowence: 5m
            """))
        #expect(error.description == "Jobs/test.yaml:3:1: unknown key \"allowence\" (did you mean \"allowance\"?)")
    }

    @Test func unknownKeyWithoutACloseMatchListsTheKeys() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            schedule: daily
            """))
        #expect(error.position == "3:1")
        #expect(error.message.hasPrefix("unknown key \"schedule\"; expected one of identifier, kind, command"))
        #expect(error.message.hasSuffix("environment, limits, user, group, timezone, missed, catch-up, jitter, fixed-jitter, accuracy, widget, provider, simulate, on-failure, on-recovery, template, parameters, instances"))
    }

    @Test func missingRequiredKeysPointAtTheMapping() {
        let errors = TestSupport.errors("""
            # a comment first
            kind: processing
            """)
        #expect(errors.map(\.position) == ["2:1", "2:1"])
        #expect(errors.map(\.message).sorted() == [
            "missing required key \"command\" (expected a list like [\"Scripts/refresh\", \"--flag\"], or action: stage-playlist)",
            "missing required key \"identifier\" (expected a reverse-DNS name like com.example.refresh)",
        ])
    }

    @Test func yamlSyntaxErrorCarriesItsMark() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true
            kind: processing
            """))
        #expect(error.description == "Jobs/test.yaml:3:5: invalid YAML: while parsing a flow sequence "
            + "(line 2, column 10): did not find expected ',' or ']'")
    }

    @Test func twoDocumentsInOneFileAreRefused() throws {
        let error = try #require(TestSupport.onlyError("identifier: a.b\ncommand: [true]\n---\nidentifier: c.d\n"))
        #expect(error.position == "3:1")
        #expect(error.message.hasSuffix("found another document; a job file holds one job (one document)"))
    }

    @Test func controlCharacterIsLocatedInUnicodeScalars() {
        #expect(TestSupport.onlyError("identifier: a.b\ncommand: [true]\nnamespace: é\u{0001}x\n")?.description
            == "Jobs/test.yaml:3:13: invalid YAML: control characters are not allowed, found \\u{1}; "
                + "expected printable text (write \\t or \\n inside double quotes)")
    }

    @Test func undefinedAliasIsNamed() {
        #expect(TestSupport.onlyError("identifier: *name\n")?.description
            == "Jobs/test.yaml:1:13: alias *name names no anchor; expected an anchor &name defined before the alias")
    }

    @Test func badIndentationIsASyntaxError() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
              command: [true]
            """))
        #expect(error.position == "2:3")
        #expect(error.message == "invalid YAML: \"command:\" is indented more than line 1 (2 spaces, not 0); "
            + "expected keys of one mapping at the same indentation, and a nested mapping only under a key with no value")
    }

    @Test func topLevelMustBeAMapping() {
        #expect(TestSupport.onlyError("- identifier: a.b\n")?.description
            == "Jobs/test.yaml:1:1: expected a mapping of job settings (identifier:, command:, ...), found a list")
        #expect(TestSupport.onlyError("\n\n  just text\n")?.position == "3:3")
        #expect(TestSupport.onlyError("# nothing here\n")?.message
            == "expected a mapping of job settings (identifier:, command:, ...), found an empty file")
    }

    @Test func duplicateKeysAreReportedAtTheSecond() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            allowance: 5s
            command: [true]
            allowance: 10s
            """))
        #expect(error.description == "Jobs/test.yaml:4:1: duplicate key \"allowance\" (first at line 2); "
            + "each key may appear only once in a mapping")
    }

    @Test func allErrorsOfAFileAreCollectedInOrder() {
        let errors = TestSupport.errors("""
            identifier: x
            kind: processing
            command: [true]
            allowance: soon
            grace: -1s
            resubmit: {after: 0s}
            retry: {backoff: random, limitt: 3}
            """)
        #expect(errors.map(\.position) == ["1:13", "4:12", "5:8", "6:19", "7:18", "7:26"])
        #expect(errors[5].message == "unknown key \"limitt\" in retry (did you mean \"limit\"?)")
    }
}
