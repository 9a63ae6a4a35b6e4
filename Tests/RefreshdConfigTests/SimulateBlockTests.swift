import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig

/// The `simulate:` block of job files, read into `JobModel`, and `JobConfig.spec`.
@Suite struct SimulateBlockTests {
    static let header = "identifier: com.example.sim\ncommand: [true]\n"

    /// The model of a job whose file is `header` plus `block`.
    func simulated(_ block: String, sourceLocation: SourceLocation = #_sourceLocation) -> JobModel? {
        TestSupport.config(Self.header + block, sourceLocation: sourceLocation)?.simulate
    }

    /// The single error of `header` plus `block`, checked to be on one line.
    func onlyError(_ block: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigError? {
        let error = TestSupport.onlyError(Self.header + block, sourceLocation: sourceLocation)
        if let error {
            #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
            #expect(error.file == "Jobs/test.yaml", sourceLocation: sourceLocation)
        }
        return error
    }

    // MARK: Fields

    /// `instances:` and `failing:` (issue 23) are read on a template and refused, at the block,
    /// on a job that is not one; a share out of 0%...100% is refused at its value.
    @Test func simulatedInstancesOfATemplate() throws {
        let template = "template: true\nparameters: [user]\nsimulate: {instances: 10000, failing: 2%}\n"
        let model = try #require(simulated(template))
        #expect(model.instances == 10000 && model.failing == 0.02)
        let notTemplate = try #require(onlyError("simulate: {instances: 10}\n"))
        #expect(notTemplate.message.contains("instances: and failing: apply only to a template"))
        let share = try #require(onlyError("template: true\nparameters: [user]\nsimulate: {failing: 200%}\n"))
        #expect(share.message == "simulate.failing: expected a percentage like 2% or 0.5%, from 0% to 100%, found \"200%\"")
    }

    @Test func everyFieldIsRead() throws {
        let model = try #require(simulated("""
            simulate:
              duration: 2s
              growth: 10s
              outcomes: {success: 0.9, failure: 0.08, crash: 0.02}
              ignores-sigterm: true
              output: ["fetched 12 images", "done"]
              results: ['{"entries": []}', '{"n": 1, "nested": {"a": [1, 2]}}']
            """))
        #expect(model == JobModel(
            duration: .fixed(.seconds(2)), growth: .seconds(10),
            outcomes: .init(success: 0.9, failure: 0.08, crash: 0.02), ignoresTerminate: true,
            output: ["fetched 12 images", "done"], results: [#"{"entries": []}"#, #"{"n": 1, "nested": {"a": [1, 2]}}"#]))
    }

    @Test func durationForms() {
        #expect(simulated("simulate: {duration: 1m30s}")?.duration == .fixed(.seconds(90)))
        #expect(simulated("simulate: {duration: 0s}")?.duration == .fixed(.zero))
        #expect(simulated("simulate: {duration: {uniform: [1s, 5s]}}")?.duration == .uniform(.seconds(1), .seconds(5)))
        #expect(simulated("simulate: {duration: {uniform: [3s, 3s]}}")?.duration == .uniform(.seconds(3), .seconds(3)))
        #expect(simulated("simulate: {duration: {median: 2s, p99: 30s}}")?.duration == .skewed(median: .seconds(2), p99: .seconds(30)))
        #expect(simulated("simulate:\n  duration:\n    uniform:\n      - 500ms\n      - 1s\n")?.duration
                == .uniform(.milliseconds(500), .seconds(1)))
    }

    @Test func defaults() throws {
        #expect(TestSupport.config(Self.header)?.simulate == nil)
        #expect(simulated("simulate: {}") == JobModel())
        #expect(simulated("simulate:\n") == JobModel())
        #expect(simulated("simulate: {growth: 1s}") == JobModel(growth: .seconds(1)))
        // Weights left out are 0 once outcomes: is given.
        #expect(simulated("simulate: {outcomes: {failure: 1}}")?.outcomes == .init(success: 0, failure: 1, crash: 0))
        #expect(simulated("simulate: {outcomes: {success: 3, crash: 1}}")?.outcomes == .init(success: 3, failure: 0, crash: 1))
        #expect(simulated("simulate: {ignores-sigterm: false}")?.ignoresTerminate == false)
        #expect(simulated("simulate: {output: one line}")?.output == ["one line"])
        #expect(simulated("simulate: {output: []}")?.output == [])
        #expect(simulated("simulate: {results: '{}'}")?.results == ["{}"])
    }

    @Test func runIgnoresTheBlockButCheckValidatesIt() {
        // The block changes nothing the daemon runs.
        let plain = TestSupport.config(Self.header)
        let simulated = TestSupport.config(Self.header + "simulate: {duration: 1h}")
        #expect(plain?.spec == simulated?.spec)
        #expect(plain?.definition == simulated?.definition)
    }

    // MARK: Errors

    @Test func unknownKeyIsSuggested() throws {
        let error = try #require(onlyError("simulate:\n  duraton: 2s\n"))
        #expect(error.position == "4:3")
        #expect(error.message == "unknown key \"duraton\" in simulate (did you mean \"duration\"?)")
        let outcome = try #require(onlyError("simulate: {outcomes: {sucess: 1}}"))
        #expect(outcome.position == "3:23")
        #expect(outcome.message == "unknown key \"sucess\" in simulate.outcomes (did you mean \"success\"?)")
    }

    @Test func notAMapping() throws {
        let error = try #require(onlyError("simulate: fast"))
        #expect(error.position == "3:11")
        #expect(error.message.hasPrefix("simulate: expected a mapping with keys duration, growth, outcomes"))
        #expect(error.message.hasSuffix("found \"fast\""))
    }

    @Test func durationErrors() throws {
        var e = try #require(onlyError("simulate: {duration: soon}"))
        #expect(e.position == "3:22")
        #expect(e.message == "simulate.duration: expected a duration like 30s, 10m or 1h30m, found \"soon\"")
        e = try #require(onlyError("simulate: {duration: [1s, 2s]}"))
        #expect(e.message == "simulate.duration: expected a duration like 2s, {uniform: [1s, 5s]}, {median: 2s, p99: 30s} or {quantiles: [1s, 2s, 9s]}, found a list")
        e = try #require(onlyError("simulate: {duration: {uniform: [1s]}}"))
        #expect(e.position == "3:32")
        #expect(e.message == "simulate.duration.uniform: expected a list of two durations like [1s, 5s], found a list of 1")
        e = try #require(onlyError("simulate: {duration: {uniform: [5s, 1s]}}"))
        #expect(e.position == "3:37")
        #expect(e.message == "simulate.duration.uniform: expected the second duration to be at least the first (5s), found \"1s\"")
        e = try #require(onlyError("simulate: {duration: {uniform: [1s, x]}}"))
        #expect(e.position == "3:37")
        e = try #require(onlyError("simulate: {duration: {median: 30s, p99: 2s}}"))
        #expect(e.position == "3:41")
        #expect(e.message == "simulate.duration.p99: expected a duration at least the median (30s), found \"2s\"")
        e = try #require(onlyError("simulate: {duration: {median: 0s, p99: 2s}}"))
        #expect(e.message == "simulate.duration.median: expected a duration greater than zero, found \"0s\"")
        e = try #require(onlyError("simulate: {duration: {median: 2s}}"))
        #expect(e.position == "3:22")
        #expect(e.message == "simulate.duration: missing required key \"p99\" (expected {uniform: [1s, 5s]} or {median: 2s, p99: 30s})")
        e = try #require(onlyError("simulate: {duration: {median: 2s, p90: 3s}}"))
        #expect(e.message == "unknown key \"p90\" in simulate.duration (did you mean \"p99\"?)")
        e = try #require(onlyError("simulate: {duration: {uniform: [1s, 2s], median: 2s}}"))
        #expect(e.position == "3:42")
        #expect(e.message == "simulate.duration: expected either uniform: or median: and p99:, found both")
        e = try #require(onlyError("simulate: {growth: -1s}"))
        #expect(e.position == "3:20")
        #expect(e.message.hasPrefix("simulate.growth: expected a duration like 30s, 10m or 1h30m, found \"-1s\""))
    }

    /// Issue 34: `{quantiles: [...]}`, the empirical distribution `simulate --calibrate`
    /// prints: 2 to 101 durations in order, read over several lines too; each misuse refused at
    /// its value.
    @Test func quantileDurations() throws {
        #expect(simulated("simulate: {duration: {quantiles: [1s, 1s500ms, 9s]}}")?.duration
                == .quantiles([.seconds(1), .milliseconds(1500), .seconds(9)]))
        #expect(simulated("simulate:\n  duration:\n    quantiles: [10ms, 20ms,\n                30ms]\n")?.duration
                == .quantiles([.milliseconds(10), .milliseconds(20), .milliseconds(30)]))
        var e = try #require(onlyError("simulate: {duration: {quantiles: [1s, 3s, 2s]}}"))
        #expect(e.position == "3:43")
        #expect(e.message == "simulate.duration.quantiles: expected each duration to be at least the one before (3s), found \"2s\"")
        e = try #require(onlyError("simulate: {duration: {quantiles: [1s]}}"))
        #expect(e.position == "3:34")
        #expect(e.message == "simulate.duration.quantiles: expected a list of 2 to 101 durations in increasing order like [1s, 2s, 9s], found a list of 1")
        e = try #require(onlyError("simulate: {duration: {quantiles: [" + Array(repeating: "1s", count: 102).joined(separator: ", ") + "]}}"))
        #expect(e.message.hasSuffix("found a list of 102"))
        e = try #require(onlyError("simulate: {duration: {quantiles: [1s, soon]}}"))
        #expect(e.position == "3:39")
        #expect(e.message.hasPrefix("simulate.duration.quantiles: expected a duration like 30s"))
        e = try #require(onlyError("simulate: {duration: {quantiles: [1s, 2s], median: 2s}}"))
        #expect(e.position == "3:44")
        #expect(e.message == "simulate.duration: expected quantiles: alone, found median: beside it")
    }

    /// Issue 34: `retry-outcomes:` weighs a retry's ends apart from a first attempt's.
    @Test func retryOutcomes() throws {
        let model = try #require(simulated("simulate: {outcomes: {success: 1, failure: 1}, retry-outcomes: {success: 9, crash: 1}}"))
        #expect(model.outcomes == .init(success: 1, failure: 1, crash: 0))
        #expect(model.retryOutcomes == .init(success: 9, failure: 0, crash: 1))
        #expect(simulated("simulate: {duration: 1s}")?.retryOutcomes == nil)
        let e = try #require(onlyError("simulate: {retry-outcomes: {success: x}}"))
        #expect(e.message == "simulate.retry-outcomes.success: expected a number 0 or greater, like 0.9 or 1, found \"x\"")
    }

    @Test func outcomeErrors() throws {
        var e = try #require(onlyError("simulate: {outcomes: {success: -1}}"))
        #expect(e.position == "3:32")
        #expect(e.message == "simulate.outcomes.success: expected a number 0 or greater, like 0.9 or 1, found \"-1\"")
        for bad in ["lots", ".", "1e3", "nan", "inf", "0x10", "1.2.3", "''"] {
            let e = try #require(onlyError("simulate: {outcomes: {crash: \(bad)}}"))
            #expect(e.message.hasPrefix("simulate.outcomes.crash: expected a number 0 or greater"), "\(bad)")
        }
        e = try #require(onlyError("simulate: {outcomes: {success: 0, failure: 0.0}}"))
        #expect(e.position == "3:22")
        #expect(e.message == "simulate.outcomes: expected at least one weight greater than 0 (like {success: 0.9, failure: 0.1}), found none")
        e = try #require(onlyError("simulate: {outcomes: [0.9, 0.1]}"))
        #expect(e.message == "simulate.outcomes: expected a mapping with keys success, failure, crash, found a list")
    }

    @Test func flagAndLineErrors() throws {
        var e = try #require(onlyError("simulate: {ignores-sigterm: maybe}"))
        #expect(e.position == "3:29")
        #expect(e.message == "simulate.ignores-sigterm: expected true or false, found \"maybe\"")
        e = try #require(onlyError("simulate:\n  output: [\"two\\nlines\"]\n"))
        #expect(e.position == "4:12")
        #expect(e.message == "simulate.output: expected one line of text, found \"two\\nlines\", which has a line break")
        e = try #require(onlyError("simulate: {output: {a: b}}"))
        #expect(e.message.hasPrefix("simulate.output: expected a list of lines like [\"fetched 12 images\"], found a mapping"))
        e = try #require(onlyError("simulate: {output: [[nested]]}"))
        #expect(e.message == "simulate.output: expected one line of text, found a list")
    }

    /// The process models of the results rules: children left in the group, a holder of fd 3.
    @Test func childrenAndAResultsChannelHeldOpen() throws {
        #expect(simulated("simulate: {children: 2}")?.children == 2)
        #expect(simulated("simulate: {results-held-open: 2s}")?.resultsHeldOpen == .closesAfter(.seconds(2)))
        #expect(simulated("simulate: {results-held-open: forever}")?.resultsHeldOpen == .forever)
        var e = try #require(onlyError("simulate: {results-held-open: always}"))
        #expect(e.message == "simulate.results-held-open: expected a duration like 2s, or forever, found \"always\"")
        e = try #require(onlyError("simulate: {children: 65}"))
        #expect(e.message == "simulate.children: expected a whole number from 0 to 64, found \"65\"")
    }

    @Test func resultsMustBeJSONObjects() throws {
        var e = try #require(onlyError("simulate:\n  results: ['{\"a\": 1}', 'not json']\n"))
        #expect(e.position == "4:25")
        #expect(e.message == "simulate.results: expected a JSON object on one line, like '{\"entries\": []}', found \"not json\" (not valid JSON)")
        e = try #require(onlyError("simulate: {results: ['[1, 2]']}"))
        #expect(e.message.hasSuffix("found \"[1, 2]\" (a JSON array, not an object)"))
        e = try #require(onlyError("simulate: {results: ['\"text\"']}"))
        #expect(e.message.hasSuffix("(a JSON value that is not an object)"))
        e = try #require(onlyError("simulate: {results: ['{\"a\": 1']}"))
        #expect(e.message.hasSuffix("(not valid JSON)"))
        // Unquoted, YAML reads the object as a mapping: the message says to quote it.
        e = try #require(onlyError("simulate:\n  results: [{\"entries\": []}]\n"))
        #expect(e.position == "4:13")
        #expect(e.message.hasSuffix("found a mapping (quote each JSON object: YAML reads {...} as a mapping)"))
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        e = try #require(onlyError("simulate: {results: ['{\"a\": \(deep)}']}"))
        #expect(e.message.hasSuffix("(nested more than 64 levels deep)"))
    }

    @Test func everyErrorOfTheBlockIsReported() {
        let errors = TestSupport.errors(Self.header + """
            simulate:
              duration: x
              growth: y
              outcomes: {success: z}
              ignores-sigterm: w
            """)
        #expect(errors.map(\.position) == ["4:13", "5:11", "6:23", "7:20"])
        #expect(errors.allSatisfy { !$0.description.contains("\n") })
    }

    // MARK: spec

    @Test func specMatchesEarliest() throws {
        let relative = try #require(TestSupport.config(Self.header + "earliest: +10s\nenvironment: {A: b}"))
        #expect(relative.spec == JobSpec(
            definition: relative.definition,
            command: CommandJob(argv: ["/usr/bin/true"], environment: ["A": "b"], workingDirectory: "/"),
            firstRequest: .after(.seconds(10))))
        #expect(TestSupport.config(Self.header)?.spec.firstRequest == .core)
        #expect(TestSupport.config(Self.header + "earliest: +0s")?.spec.firstRequest == .core)
        let absolute = try #require(TestSupport.config(Self.header + "earliest: 2026-11-22T04:00:00+01:00"))
        #expect(absolute.spec.firstRequest == .at(TestSupport.instant("2026-11-22T03:00:00Z")))
        let calendar = try #require(TestSupport.config(Self.header + "earliest: \"*-*-* 06:00\"\ntimezone: Europe/Paris"))
        guard case .nextSlot(let schedule) = calendar.spec.firstRequest else {
            Issue.record("expected a calendar first request, got \(calendar.spec.firstRequest)")
            return
        }
        #expect(schedule.text == "*-*-* 06:00 [Europe/Paris]")
        #expect(calendar.spec.identifier == "com.example.sim")
    }

    // MARK: Shipped examples

    static let projectRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func shippedJobsStillParse() throws {
        let jobs = try JobDirectory.load(Self.projectRoot + "/Jobs", searchPath: TestSupport.searchPath,
                                         now: TestSupport.now, timeZone: TestSupport.machineZone).get()
        #expect(jobs.count >= 5)
        #expect(jobs.allSatisfy { $0.spec.identifier == $0.identifier })
    }
}
