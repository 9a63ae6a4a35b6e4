import ArgumentParser
import Foundation
import Refreshd
import RefreshdCore
import RefreshdRuntime
import RefreshdDaemon

/// `refreshd ctl`: act on the running refreshd through its control socket, without restarting it.
package struct CtlCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Act on the running refreshd: pending requests, submit, cancel, pause and resume, simulate a launch or an expiration, reload widgets, drive live activities, add and remove instances of templates.",
        subcommands: [Pending.self, Submit.self, Cancel.self, CancelAll.self, Pause.self, Resume.self, SimulateLaunch.self,
                      SimulateExpiration.self, Reload.self, ActivityCommand.self, InstanceCommand.self])

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
        @Option(name: .customLong("command-id"), help: "Cluster mode: the command's id; a retry with the same id is applied once (default: a new id).")
        var commandID: String?

        func run() throws {
            var when: Instant?
            if let earliest {
                guard let parsed = ControlOutput.parseWhen(earliest, now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970)) else {
                    ControlOutput.fail(ControlFailure(code: "bad-request", message: "--earliest: expected +DURATION (like +10m) or an ISO 8601 date with offset, found \"\(earliest)\""),
                                       json: options.json, command: "ctl submit")
                }
                when = parsed
            }
            let request = ControlRequest(.submit, identifier: identifier, earliest: when)
            try ControlOutput.perform(request, commandID: commandID, options: options, command: "ctl submit", otherwise: "submitted \(identifier)")
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a job's pending request.")
        @OptionGroup var options: Options
        @Argument(help: "The job's identifier.") var identifier: String
        @Option(name: .customLong("command-id"), help: "Cluster mode: the command's id; a retry with the same id is applied once (default: a new id).")
        var commandID: String?

        func run() throws {
            let request = ControlRequest(.cancel, identifier: identifier)
            try ControlOutput.perform(request, commandID: commandID, options: options, command: "ctl cancel", otherwise: "cancelled \(identifier)")
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause a job, an instance or a template: it keeps its pending request and launches nothing until resumed (kept across restarts).")
        @OptionGroup var options: Options
        @Argument(help: "The job's, instance's or template's identifier.") var identifier: String
        @Option(name: .customLong("command-id"), help: "Cluster mode: the command's id; a retry with the same id is applied once (default: a new id).")
        var commandID: String?

        func run() throws {
            let request = ControlRequest(.pause, identifier: identifier)
            try ControlOutput.perform(request, commandID: commandID, options: options, command: "ctl pause", otherwise: "paused \(identifier)")
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a paused job, instance or template: slots it missed while paused follow its missed policy, as after downtime.")
        @OptionGroup var options: Options
        @Argument(help: "The paused identifier.") var identifier: String
        @Option(name: .customLong("command-id"), help: "Cluster mode: the command's id; a retry with the same id is applied once (default: a new id).")
        var commandID: String?

        func run() throws {
            let request = ControlRequest(.resume, identifier: identifier)
            try ControlOutput.perform(request, commandID: commandID, options: options, command: "ctl resume", otherwise: "resumed \(identifier)")
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

    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask a widget kind's timelines (or every kind's) for a reload, like WidgetKit's reloadTimelines(ofKind:).",
            discussion: "Counted against each family's budget (deferred, never dropped, when it is spent) unless --foreground makes it the exempt reload of an app in the foreground.")
        @OptionGroup var options: Options
        @Argument(help: "The widget kind.") var kind: String?
        @Flag(name: .long, help: "Every widget kind (reloadAllTimelines).") var all = false
        @Flag(name: .long, help: "Exempt: the app is in the foreground (not counted against the budget).") var foreground = false

        func validate() throws {
            if all == (kind != nil) { throw ValidationError("expected a widget kind or --all (one of them)") }
        }

        func run() throws {
            let reply = try ControlOutput.call(ControlRequest(.reload, kind: kind, all: all ? true : nil, foreground: foreground ? true : nil),
                                               state: options.state, json: options.json, command: "ctl reload")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "reload asked")
            for w in reply.timelines?.widgets ?? [] where all || w.kind == kind {
                let budget = w.budgetLimit.map { "\(w.budgetUsed ?? 0)/\($0) used" } ?? "unlimited"
                let state = w.providerRunningSince != nil ? "provider running" : w.nextReloadWhy == .deferred ? "deferred until \(w.nextReload.map { "\($0)" } ?? "budget returns")" : w.nextReloadWhy == .spaced ? "spaced until \(w.nextReload.map { "\($0)" } ?? "the interval ends")" : "idle"
                print("  \(w.kind)/\(w.family.rawValue)  \(state)  budget \(budget)")
            }
        }
    }

    struct ActivityCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "activity",
            abstract: "Start, update or end a live activity, like ActivityKit's request, update and end.",
            subcommands: [Start.self, Update.self, End.self])

        /// Content flags shared by the three verbs.
        struct Content: ParsableArguments {
            @Option(help: "The content state, a JSON object (default {}).") var content: String?
            @Option(help: "Progress 0...1, set as the content's \"progress\" (shown as a percentage).") var progress: Double?

            /// Checked here, not in `run()`, so that the error comes with this verb's usage.
            func validate() throws {
                if let p = progress, !(p.isFinite && (0...1).contains(p)) {
                    throw ValidationError("--progress: expected a fraction from 0 to 1, found \(p)")
                }
            }
        }

        static func content(_ c: Content) throws -> [String: Any]? {
            var object: [String: Any]?
            if let text = c.content {
                guard let parsed = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
                    throw ValidationError("--content: expected a JSON object like {\"progress\":0.5}, found \(text)")
                }
                object = parsed
            }
            if let p = c.progress {
                guard p.isFinite, (0...1).contains(p) else { throw ValidationError("--progress: expected a fraction from 0 to 1, found \(p)") }
                object = (object ?? [:]).merging(["progress": p]) { _, new in new }
            }
            return object
        }

        static func date(_ text: String?, _ flag: String) throws -> String? {
            guard let text else { return nil }
            guard let when = ControlOutput.parseWhen(text, now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970)) else {
                throw ValidationError("\(flag): expected +DURATION (like +10m) or an ISO 8601 date with offset, found \"\(text)\"")
            }
            return ISO8601.format(when)
        }

        static func send(_ line: [String: Any], _ options: Options, _ verb: String) throws {
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
            let reply = try ControlOutput.call(ControlRequest(.activity, activity: String(decoding: data, as: UTF8.self)),
                                               state: options.state, json: options.json, command: "ctl activity \(verb)")
            if options.json { return ControlOutput.printJSON(reply) }
            print(reply.message ?? "\(verb) done")
            let id = line["id"] as? String
            let now = reply.now ?? Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            for a in reply.activities?.activities ?? [] where a.id == id {
                var text = "  \(a.id)  \(a.state.rawValue) since \(a.since)"
                if let p = a.progressPercent { text += "  progress \(MachineStatusText.percent(p))" }
                if a.held != nil { text += "  (an update is held: throttled)" }
                if let d = a.dismissal, d > now { text += "  " + MachineStatusText.dismissal(d, state: a.state) }
                print(text)
            }
        }

        struct Start: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Start an activity now or at a date (ActivityKit's request).")
            @OptionGroup var options: Options
            @Argument(help: "The activity's id.") var id: String
            @Option(name: .customLong("type"), help: "The activity's type name.") var type: String
            @Option(help: "Static attributes, a JSON object (default {}).") var attributes: String?
            @OptionGroup var content: Content
            @Option(name: .customLong("stale-date"), help: "Stale date: +DURATION or an ISO 8601 date.") var staleDate: String?
            @Option(name: .customLong("start-at"), help: "Start at this date (pending until then).") var startAt: String?
            @Option(help: "Namespace counted against the concurrency limit (default: default).") var namespace: String?
            @Flag(name: .customLong("frequent-updates"), help: "The larger high-priority update budget.") var frequentUpdates = false

            func run() throws {
                var line: [String: Any] = ["activity": "start", "id": id, "type": type]
                if let attributes {
                    guard let parsed = (try? JSONSerialization.jsonObject(with: Data(attributes.utf8))) as? [String: Any] else {
                        throw ValidationError("--attributes: expected a JSON object, found \(attributes)")
                    }
                    line["attributes"] = parsed
                }
                if let c = try ActivityCommand.content(content) { line["content"] = c }
                if let d = try ActivityCommand.date(staleDate, "--stale-date") { line["staleDate"] = d }
                if let d = try ActivityCommand.date(startAt, "--start-at") { line["startAt"] = d }
                if let namespace { line["namespace"] = namespace }
                if frequentUpdates { line["frequentUpdates"] = true }
                try ActivityCommand.send(line, options, "start")
            }
        }

        struct Update: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "New content and stale date (ActivityKit's update).")
            @OptionGroup var options: Options
            @Argument(help: "The activity's id.") var id: String
            @OptionGroup var content: Content
            @Option(name: .customLong("stale-date"), help: "Stale date: +DURATION or an ISO 8601 date.") var staleDate: String?
            @Option(help: "high (counted against the hourly budget) or low.") var priority: String = "low"

            func run() throws {
                guard ["high", "low"].contains(priority) else { throw ValidationError("--priority: expected high or low, found \(priority)") }
                var line: [String: Any] = ["activity": "update", "id": id, "priority": priority]
                line["content"] = try ActivityCommand.content(content) ?? [:]
                if let d = try ActivityCommand.date(staleDate, "--stale-date") { line["staleDate"] = d }
                try ActivityCommand.send(line, options, "update")
            }
        }

        struct End: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "End with final content and a dismissal policy (ActivityKit's end).")
            @OptionGroup var options: Options
            @Argument(help: "The activity's id.") var id: String
            @OptionGroup var content: Content
            @Option(help: "default (4 h after ending), immediate, or a date (+DURATION or ISO 8601).") var dismissal: String = "default"

            func run() throws {
                var line: [String: Any] = ["activity": "end", "id": id]
                if let c = try ActivityCommand.content(content) { line["content"] = c }
                switch dismissal {
                case "default", "immediate": line["dismissal"] = dismissal
                default: line["dismissal"] = ["after": try ActivityCommand.date(dismissal, "--dismissal") ?? ""]
                }
                try ActivityCommand.send(line, options, "end")
            }
        }
    }
}

extension ControlOutput {
    /// A command queued by id in cluster mode (`--command-id`): sends `request` with that id,
    /// prints the reply as JSON with `--json`, else its message (or `otherwise`).
    static func perform(_ request: ControlRequest, commandID: String?, options: CtlCommand.Options, command: String,
                        otherwise: String) throws {
        var request = request
        request.commandID = commandID
        let reply = try call(request, state: options.state, json: options.json, command: command)
        if options.json { return printJSON(reply) }
        print(reply.message ?? otherwise)
    }
}
