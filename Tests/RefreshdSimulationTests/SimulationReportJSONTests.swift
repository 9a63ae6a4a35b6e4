import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// `prettyJSON()` writes the runs by hand: it must be byte for byte what `JSONEncoder` writes.
@Suite struct SimulationReportJSONTests {
    static func encoderText(_ report: SimulationReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(report) + Data("\n".utf8)
    }

    @Test func theHandWrittenRunsAreWhatJSONEncoderWrites() throws {
        // Finished runs, an interrupted one (kill -9), one still running at the end (no `ended`,
        // no outcome) and a job with no run at all (an empty list).
        var long = SimulationTests.nightly(missed: .once, model: JobModel(duration: .fixed(.seconds(23 * 3600))))
        long.spec.definition.allowance = .seconds(24 * 3600)
        var never = SimulationTests.refresh()
        never.spec.definition = TaskDefinition(identifier: "test.never", allowance: .seconds(30))
        never.spec.firstRequest = .after(.seconds(30 * 86_400))
        let scenario = Scenario(name: "json", jobs: [long, SimulationTests.refresh(), never],
                                device: DeviceModel(discretion: .exact),
                                faults: [.kill(at: .afterStart(.seconds(5 * 3600)), restartAfter: .seconds(60))],
                                start: SimulationTests.monday, days: 2, seed: 5)
        let report = Simulation(scenario: scenario).run()
        let runs = report.jobs.flatMap(\.runs)
        #expect(runs.contains { $0.ended == nil && $0.outcome == nil }, "a run still in flight at the end")
        #expect(runs.contains { $0.outcome == .interrupted })
        #expect(report.jobs.contains { $0.runs.isEmpty })
        let ours = try report.prettyJSON()
        let theirs = try Self.encoderText(report)
        #expect(ours == theirs, "first difference at byte \(Array(zip(ours, theirs)).firstIndex { $0.0 != $0.1 } ?? min(ours.count, theirs.count))")
    }

    /// Written in pieces (as `simulate --json` writes to stdout), the bytes are the same, wherever
    /// a piece ends: inside a job's runs, between jobs, in the report around them.
    @Test(arguments: [1, 7, 300, 1 << 20])
    func piecesJoinToTheSameBytes(chunk: Int) throws {
        let scenario = Scenario(name: "pieces", jobs: [SimulationTests.refresh(), SimulationTests.nightly(missed: .all)],
                                device: DeviceModel(discretion: .exact), faults: [],
                                start: SimulationTests.monday, days: 3, seed: 9)
        let report = Simulation(scenario: scenario).run()
        #expect(report.jobs.allSatisfy { $0.runs.count > 1 })
        var joined = Data()
        var pieces = 0
        try report.writePrettyJSON(chunk: chunk) { bytes in
            #expect(!bytes.isEmpty)
            joined.append(contentsOf: bytes)
            pieces += 1
        }
        #expect(joined == (try Self.encoderText(report)))
        #expect(chunk >= 1 << 20 ? pieces == 1 : pieces > 2, "\(pieces) pieces")
    }

    @Test func aReportWithoutJobsIsUnchanged() throws {
        let scenario = Scenario(name: "empty", jobs: [], device: DeviceModel(discretion: .exact),
                                faults: [], start: SimulationTests.monday, days: 1, seed: 1)
        let report = Simulation(scenario: scenario).run()
        #expect(try report.prettyJSON() == Self.encoderText(report))
    }
}
