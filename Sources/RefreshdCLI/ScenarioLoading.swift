import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdSimulation

/// Reads a scenario file for `simulate` and `test`; prints its located errors and exits 1.
enum ScenarioLoading {
    /// `now`: the start when the file names none is the next midnight UTC after it.
    static func load(_ path: String, now: Instant, zone: TimeZone) throws -> Scenario {
        switch ScenarioFile.load(path: path, defaultStart: ScenarioFile.defaultStart(now: now), timeZone: zone.identifier) {
        case let .success(scenario):
            return Scenario(scenario)
        case let .failure(errors):
            for error in errors.errors { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
            let count = errors.errors.count
            FileHandle.standardError.write(Data("refreshd: \(count) error\(count == 1 ? "" : "s") in \(path)\n".utf8))
            throw ExitCode(1)
        }
    }
}
