import ArgumentParser
import Foundation
import Refreshd
import RefreshdCore
import RefreshdRuntime

/// `refreshd ctl`: act on the running refreshd through its control socket, without restarting it.
struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Act on the running refreshd: pending requests, submit, cancel, simulate a launch or an expiration.",
        subcommands: [Pending.self, Submit.self, Cancel.self, CancelAll.self, SimulateLaunch.self,
                      SimulateExpiration.self])

    struct Options: ParsableArguments {
        @Option(name: .long, help: "State directory of the running refreshd (its control.sock).")
        var state = ".refreshd"

        @Flag(help: "Print the reply as one JSON object (the control protocol's reply).")
        var json = false
    }

    struct Pending: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the pending requests, in due order, with where each one waits.")
        @OptionGroup var options: Options

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.pending), state: options.state, json: options.json, command: "ctl pending")
            if options.json { return ControlOutput.printJSON(reply) }
            let pending = reply.pending ?? []
            print("Pending requests (\(pending.count)):")
            let now = reply.now ?? Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            for p in pending { print("  " + ControlOutput.describe(p, now: now)) }
        }
    }

    struct Submit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Submit a request for a loaded job (replacing its pending one).")
        @OptionGroup var options: Options
        @Argument(help: "The job's identifier.") var identifier: String
        @Option(help: "Earliest begin date: +DURATION (+10m) or an ISO 8601 date with offset. Default: now.")
        var earliest: String?

        func run() throws {
            var when: Instant?
            if let earliest {
                guard let parsed = ControlOutput.parseWhen(earliest, now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970)) else {
                    ControlOutput.fail(ControlFailure(code: "bad-request", message: "--earliest: expected +DURATION (like +10m) or an ISO 8601 date with offset, found \"\(earliest)\""),
                                       json: options.json, command: "ctl submit")
                }
                when = parsed
            }
            let reply = try ControlOutput.call(ControlRequest(.submit, identifier: identifier, earliest: when),
                                               state: options.state, json: options.json, command: "ctl submit")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "submitted \(identifier)")
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a job's pending request.")
        @OptionGroup var options: Options
        @Argument(help: "The job's identifier.") var identifier: String

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.cancel, identifier: identifier), state: options.state,
                                               json: options.json, command: "ctl cancel")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "cancelled \(identifier)")
        }
    }

    struct CancelAll: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cancel-all", abstract: "Cancel every pending request.")
        @OptionGroup var options: Options

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.cancelAll), state: options.state, json: options.json,
                                               command: "ctl cancel-all")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "cancelled")
        }
    }

    struct SimulateLaunch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "simulate-launch",
            abstract: "Launch a job's pending request now, ignoring its earliest begin date and conditions.")
        @OptionGroup var options: Options
        @Argument(help: "The job's identifier.") var identifier: String

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.simulateLaunch, identifier: identifier), state: options.state,
                                               json: options.json, command: "ctl simulate-launch")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "launched \(identifier)")
        }
    }

    struct SimulateExpiration: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "simulate-expiration",
            abstract: "Deliver the expiration to a job's running run now (SIGTERM, then SIGKILL after its grace).")
        @OptionGroup var options: Options
        @Argument(help: "The job's identifier.") var identifier: String

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.simulateExpiration, identifier: identifier), state: options.state,
                                               json: options.json, command: "ctl simulate-expiration")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "expired \(identifier)")
        }
    }
}
