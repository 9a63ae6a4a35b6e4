import ArgumentParser
import Foundation
import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// `refreshd why ID`: in one paragraph, why a job is not running now and when it will; for a
/// timeline job, what each family's widget waits for; for a live activity, where it stands.
/// An identifier refreshd does not know exits 1, with the known names it may have meant.
///
/// Asks the running refreshd when there is one (it knows where each request waits: the
/// concurrency cap, a run in flight, conditions, an admission hold); otherwise reads the state
/// files read-only, and the job files for the job's policies.
package struct WhyCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "why",
        abstract: "Explain why a job is not running now and when it will.")

    @Argument(help: "A job's identifier, a timeline job's family (JOB#FAMILY) or a live activity's id.")
    var identifier: String

    @Option(name: .long, help: "State directory.")
    var state = ".refreshd"

    @Option(name: .long, help: "Job directory, read for the job's policies when refreshd is not running.")
    var jobs = "Jobs"

    @Flag(help: "Print one JSON object: identifier, live, reasons (codes) and paragraph.")
    var json = false

    package func run() throws {
        let report: WhyReport
        do {
            let client = try ControlClient.connect(stateDirectory: state)
            let reply = try client.request(ControlRequest(.why, identifier: identifier))
            guard reply.ok, let why = reply.why else {
                ControlOutput.fail(reply.error ?? ControlFailure(code: "internal", message: "no answer"), json: json, command: "why")
            }
            report = why
        } catch ControlClient.Failure.notRunning {
            do {
                report = WhyExplainer.explain(try factsFromFiles())
            } catch let error as StoreError {
                ControlOutput.fail(ControlFailure(code: error.kind.name, message: error.description), json: json, command: "why")
            }
        } catch {
            ControlOutput.fail(ControlFailure(code: "connection", message: "\(error)"), json: json, command: "why")
        }
        if json { ControlOutput.printJSON(report) } else { print(report.paragraph) }
        if report.subject == .unknown { throw ExitCode(1) }
    }

    /// What the state files (read-only) and the job files say (`WhyFacts.gather`, as every
    /// asker gathers them).
    func factsFromFiles() throws -> WhyFacts {
        try StateDirectory.checkReadable(state)
        let store = try StateStore.open(directory: state, readOnly: true)
        defer { store.close() }
        var specs: [JobSpec]?
        if case let .success(configs) = JobDirectory.load(jobs, accounts: nil) { specs = configs.map(\.spec) }
        return try WhyFacts.gather(identifier, store: store, jobs: specs, memory: nil,
                                   now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970))
    }
}
