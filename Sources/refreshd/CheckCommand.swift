import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore

/// `refreshd check`: validates a job directory without running anything.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate job files; print every error with file:line:column, exit 1 if any.")

    @Argument(help: "Directory of job files.")
    var directory = "Jobs"

    @Flag(help: "Print the jobs as JSON.")
    var json = false

    func run() throws {
        switch JobDirectory.load(directory) {
        case let .failure(errors):
            for error in errors.errors { print(error) }
            print("\(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s") in \(directory)")
            throw ExitCode(1)
        case let .success(jobs):
            if json {
                let rows = jobs.map { job -> [String: String] in
                    ["identifier": job.definition.identifier, "kind": job.definition.kind.rawValue,
                     "file": job.file, "earliest": job.earliest.text,
                     "allowance": DurationParser.format(job.definition.allowance)]
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            for job in jobs {
                let d = job.definition
                var parts = ["\(d.kind.rawValue)", "earliest \(job.earliest.text)",
                             "allowance \(DurationParser.format(d.allowance))"]
                if case let .after(interval) = d.resubmit { parts.append("resubmit after \(DurationParser.format(interval))") }
                if let retry = d.retry { parts.append("retry \(retry.backoff.rawValue) x\(retry.limit)") }
                print("\(d.identifier): \(parts.joined(separator: ", "))  (\(job.file))")
            }
            print("\(jobs.count) job\(jobs.count == 1 ? "" : "s") OK in \(directory)")
        }
    }
}
