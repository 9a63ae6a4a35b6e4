import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Each setting's bad values, rejected at the exact line and column of the value.
@Suite struct JobSettingsTests {
    @Test func badDurationPointsAtTheValue() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            kind: app-refresh
            allowance:  thirty
            """))
        #expect(error.description
            == "Jobs/test.yaml:4:13: allowance: expected a duration like 30s, 10m or 1h30m, found \"thirty\"")
    }

    @Test func zeroAllowanceAndBareNumber() {
        let errors = TestSupport.errors("""
            identifier: com.example.refresh
            command: [true]
            allowance: 0s
            grace: 5
            """)
        #expect(errors.map(\.position) == ["3:12", "4:8"])
        #expect(errors[0].message == "allowance: expected a duration greater than zero, found \"0s\"")
        #expect(errors[1].message.contains("the unit is missing after 5"))
    }

    @Test func badEnumListsTheAllowedValues() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            kind: background
            command: [true]
            """))
        #expect(error.description
            == "Jobs/test.yaml:2:7: kind: expected one of app-refresh, processing, found \"background\"")
    }

    @Test func wrongTypes() {
        let errors = TestSupport.errors("""
            identifier: [com, example]
            command: [true, {a: b}]
            namespace: {x: 1}
            earliest: [now]
            environment: [A]
            """)
        #expect(errors.map(\.position) == ["1:13", "2:17", "3:12", "4:11", "5:14"])
        #expect(errors[0].message.hasPrefix("identifier: expected a reverse-DNS name"))
        #expect(errors[0].message.hasSuffix("found a list"))
        #expect(errors[1].message == "command: expected each element to be a string, found a mapping")
        #expect(errors[2].message.hasSuffix("found a mapping"))
        #expect(errors[3].message == "earliest: expected +DURATION or an ISO 8601 date, found a list")
        #expect(errors[4].message == "environment: expected a mapping like {NAME: value}, found a list")
    }

    @Test func requiresOnAppRefreshIsRejected() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            requires: [network]
            """))
        #expect(error.position == "3:1")
        #expect(error.message.hasPrefix("requires: only processing jobs can require network"))
    }

    @Test func badAndDuplicateRequirements() {
        let errors = TestSupport.errors("""
            identifier: com.example.refresh
            kind: processing
            command: [true]
            requires: [network, wifi, network]
            """)
        #expect(errors.map(\.position) == ["4:21", "4:27"])
        #expect(errors[0].message == "requires: expected one of external-power, network, found \"wifi\"")
        #expect(errors[1].message == "requires: \"network\" is listed twice; expected each requirement at most once")
    }

    @Test func emptyCommandList() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: []
            """))
        #expect(error.description == "Jobs/test.yaml:2:10: command: expected a program and its arguments, found an empty list")
    }

    @Test func badIdentifiers() {
        for (text, column) in [("refresh", 13), ("com..example", 13), ("com.example.wall paper", 13), ("\"com.ex!\"", 13)] {
            let errors = TestSupport.errors("identifier: \(text)\ncommand: [true]\n")
            #expect(errors.map(\.position) == ["1:\(column)"], "\(text)")
            #expect(errors.first?.message.hasPrefix("identifier: expected a reverse-DNS name") == true)
        }
    }

    @Test func badIsoDate() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            earliest: 2026-11-22T04:00:00
            """))
        #expect(error.position == "3:11")
        #expect(error.message.hasSuffix("found \"2026-11-22T04:00:00\" (the offset is missing: add Z for UTC or ±HH:MM)"))
    }
}
