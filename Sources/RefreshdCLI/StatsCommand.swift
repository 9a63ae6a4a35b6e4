import ArgumentParser
import Foundation
import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// `refreshd stats`: counters over days. `stats reloads` shows, per UTC day and widget, the
/// reloads requested, performed, deferred and exempt, provider calls, upstream fetches and stale
/// minutes: the counter developers of budget-burning widgets had to build by hand.
package struct StatsCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Counters over days: widget reloads, runs by job.",
        subcommands: [Reloads.self, Runs.self])

    /// `refreshd stats runs`: runs by job and outcome over the last days, answered by the running
    /// refreshd (`run-stats`: one machine's store or every shard's), or read from the stopped
    /// one's state file by the same rule. A template's instances are folded into
    /// one row (issue 23): instances that ran, failing ones and the ten most failing;
    /// `--instance template[key]` shows that one instance.
    struct Runs: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per job: runs by outcome over the last days; a template's instances folded into one row.")

        @Option(name: .long, help: "State directory.")
        var state = ".refreshd"

        @Option(name: .long, help: "How many days, ending now.")
        var days = 7

        @Option(name: .long, help: ArgumentHelp("Show one instance of a template, not its template's folded row.",
                                                valueName: "template[key]"))
        var instance: String?

        @Flag(help: "Print one JSON object: days, since, instance and rows.")
        var json = false

        func validate() throws {
            guard (1...3660).contains(days) else {
                throw ValidationError("--days: expected 1 to 3660 days, found \(days)")
            }
            if let instance, InstanceName.split(instance) == nil {
                throw ValidationError("--instance: expected template[key] (a key of \(InstanceName.keyExpectation)), found \(EchoText.quoted(instance, limit: 80))")
            }
        }

        func run() throws {
            var request = ControlRequest(.runStats, days: days)
            request.identifier = instance
            // A running refreshd answers (a cluster node: from every shard in the database);
            // stopped, the state file is read by the same rule.
            let stats = StatsCommand.answer(request, state: state, json: json, command: "stats runs", \.runStats) { store in
                try RunStats.answer(request, StateReader(stores: [store], jobs: []), now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970))
            }
            if json { return ControlOutput.printJSON(stats) }
            for line in stats.lines { print(line) }
        }
    }

    struct Reloads: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per day and widget: reloads requested, performed, deferred and exempt, provider calls, upstream fetches, stale minutes.")

        @Option(name: .long, help: "State directory.")
        var state = ".refreshd"

        @Option(name: .long, help: "How many UTC days, ending today.")
        var days = 7

        @Option(name: .long, help: "Job directory, read for its timeline templates when refreshd is not running.")
        var jobs = "Jobs"

        @Flag(help: "Print one JSON object: from, to and rows (keys as in the simulation report).")
        var json = false

        func validate() throws {
            guard (1...3660).contains(days) else {
                throw ValidationError("--days: expected 1 to 3660 days, found \(days)")
            }
        }

        func run() throws {
            let stats = StatsCommand.answer(ControlRequest(.stats, days: days), state: state, json: json, command: "stats reloads",
                                            \.stats) { store in
                let saved = try SavedMachineState(store: store)
                // The instances' widgets fold as the live refreshd folds them: whose each
                // kind is, from the saved instances and their templates' files.
                var templates: [String: String] = [:]
                for definition in StatusCommand.widgetDefinitions(jobs: jobs, instances: try store.instances()) {
                    if let split = InstanceName.split(definition.job) { templates[definition.kind] = split.template }
                }
                return ReloadStats(counters: saved.counters, days: days,
                                   now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970)).folding(templates)
            }
            if json { return ControlOutput.printJSON(stats) }
            for line in stats.lines { print(line) }
        }
    }

    /// `request` answered by the running refreshd (its reply's `field`), or, when none runs, by
    /// `read` of the state file (read-only); a refusal or an unreadable state exits with
    /// `ControlOutput.fail` (`--json` aware). Both `stats` subcommands ask this way.
    static func answer<T>(_ request: ControlRequest, state: String, json: Bool, command: String,
                          _ field: KeyPath<ControlReply, T?>, read: (StateStore) throws -> T) -> T {
        do {
            let reply = try ControlClient.connect(stateDirectory: state).request(request)
            guard reply.ok, let live = reply[keyPath: field] else {
                ControlOutput.fail(reply.error ?? ControlFailure(code: "internal", message: "no \(command) in the reply"),
                                   json: json, command: command)
            }
            return live
        } catch ControlClient.Failure.notRunning {
            do {
                try StateDirectory.checkReadable(state)
                let store = try StateStore.open(directory: state, readOnly: true)
                defer { store.close() }
                return try read(store)
            } catch let error as StoreError {
                ControlOutput.fail(ControlFailure(code: error.kind.name, message: error.description), json: json, command: command)
            } catch {
                ControlOutput.fail(ControlFailure(code: "internal", message: "\(error)"), json: json, command: command)
            }
        } catch {
            ControlOutput.fail(ControlFailure(code: "connection", message: "\(error)"), json: json, command: command)
        }
    }
}
