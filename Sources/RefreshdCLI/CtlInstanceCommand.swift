import ArgumentParser
import Foundation
import RefreshdCore
import RefreshdDaemon
import RefreshdRuntime

extension CtlCommand {
    /// `refreshd ctl instance add|remove|list` (issue 23): instances of a template, through the
    /// control socket. Several keys go in one connection, pipelined, so a client's adds of one
    /// loop turn are committed together.
    struct InstanceCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "instance",
            abstract: "Add, remove or list the instances of a template (a job file with template: true).",
            subcommands: [Add.self, Remove.self, List.self])

        struct Keys: ParsableArguments {
            @Argument(help: "The template's identifier.") var template: String
            @Argument(help: "Instance keys (\(InstanceName.keyExpectation)).") var keys: [String] = []
            @Option(name: .customLong("keys-from"), help: "Read more keys from this file, one a line ('-': standard input).")
            var keysFrom: String?

            func allKeys() throws -> [String] {
                var all = keys
                if let keysFrom {
                    let text: String
                    if keysFrom == "-" {
                        text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                    } else {
                        guard let data = FileManager.default.contents(atPath: keysFrom) else {
                            throw ValidationError("--keys-from: cannot read \(keysFrom)")
                        }
                        text = String(decoding: data, as: UTF8.self)
                    }
                    all += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                }
                guard !all.isEmpty else { throw ValidationError("expected at least one key (or --keys-from FILE)") }
                return all
            }
        }

        /// Sends one request per key on one connection, at most `window` unanswered at once; the
        /// replies in order. Exits 1 after printing every reply when any was refused.
        static func send(_ requests: [ControlRequest], options: Options, command: String) throws -> [ControlReply] {
            let client: ControlClient
            do {
                client = try ControlClient.connect(stateDirectory: options.state)
            } catch {
                let code: String = if case .notRunning = error { "not-running" } else { "connection" }
                ControlOutput.fail(ControlFailure(code: code, message: "\(error)"), json: options.json, command: command)
            }
            var replies: [ControlReply] = []
            let window = 64
            var sent = 0
            do {
                while replies.count < requests.count {
                    while sent < requests.count, sent - replies.count < window {
                        var request = requests[sent]
                        request.id = sent + 1
                        try client.send(request)
                        sent += 1
                    }
                    guard let reply = try client.read() else { break }
                    replies.append(reply)
                }
            } catch {
                ControlOutput.fail(ControlFailure(code: "connection", message: "\(error)"), json: options.json, command: command)
            }
            return replies
        }

        static func report(_ replies: [ControlReply], options: Options, command: String) {
            if options.json {
                for reply in replies { ControlOutput.printJSON(reply) }
            } else {
                for reply in replies {
                    if reply.ok {
                        print(reply.message ?? "done")
                    } else if let error = reply.error {
                        FileHandle.standardError.write(Data("refreshd: \(command): \(error.message) [\(error.code)]\n".utf8))
                    }
                }
            }
            if replies.contains(where: { !$0.ok }) { Foundation.exit(1) }
        }

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add instances (an existing one keeps its request, backoff and retry streak).",
                discussion: "With one parameter the key is its value; with several, give every parameter with --param name=value (the same values for every key given).")
            @OptionGroup var options: Options
            @OptionGroup var keys: Keys
            @Option(name: .customLong("param"), help: "A parameter's value, name=value (repeat for each parameter).")
            var params: [String] = []

            func run() throws {
                var values: [String: String] = [:]
                for param in params {
                    guard let eq = param.firstIndex(of: "="), eq != param.startIndex else {
                        throw ValidationError("--param: expected name=value, found \"\(param)\"")
                    }
                    values[String(param[..<eq])] = String(param[param.index(after: eq)...])
                }
                // One key: its own reply. Several: batches, each committed in one transaction
                // (one command a shard on a cluster node).
                let all = try keys.allKeys()
                let requests = (all.count == 1 ? [[all[0]]] : InstanceCommand.batches(all)).map { batch in
                    var request = ControlRequest(.instanceAdd)
                    request.template = keys.template
                    if all.count == 1 { request.key = batch[0] } else { request.keys = batch }
                    request.values = values.isEmpty ? nil : values
                    return request
                }
                InstanceCommand.report(try InstanceCommand.send(requests, options: options, command: "ctl instance add"),
                                       options: options, command: "ctl instance add")
            }
        }

        /// The keys in batches a request line can carry: at most `Bounds.instances` keys and
        /// about 48 KiB of them (the socket's lines are at most 64 KiB; a key's quotes, comma and
        /// escapes counted at 8 bytes).
        static func batches(_ keys: [String]) -> [[String]] {
            var batches: [[String]] = []
            var current: [String] = []
            var bytes = 0
            for key in keys {
                let size = key.utf8.count + 8
                if !current.isEmpty, current.count == ControlRequest.Bounds.instances.upperBound || bytes + size > 48 * 1024 {
                    batches.append(current)
                    current = []
                    bytes = 0
                }
                current.append(key)
                bytes += size
            }
            if !current.isEmpty { batches.append(current) }
            return batches
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove instances: each one's pending request is cancelled and its live activities end; its history stays.")
            @OptionGroup var options: Options
            @OptionGroup var keys: Keys

            func run() throws {
                let requests = try keys.allKeys().map { key in
                    var request = ControlRequest(.instanceRemove)
                    request.template = keys.template
                    request.key = key
                    return request
                }
                InstanceCommand.report(try InstanceCommand.send(requests, options: options, command: "ctl instance remove"),
                                       options: options, command: "ctl instance remove")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List a template's instances, in the order they were added.",
                discussion: "At most 10,000 a reply: --after KEY gives the next page (the reply names it).")
            @OptionGroup var options: Options
            @Argument(help: "The template's identifier.") var template: String
            @Option(help: "List the instances after the one with this key.") var after: String?
            @Option(help: "At most this many (1 to 10,000; default 10,000).") var limit: Int?

            func run() throws {
                var request = ControlRequest(.instanceList)
                request.template = template
                request.after = after
                request.limit = limit
                let reply = try ControlOutput.call(request, state: options.state, json: options.json, command: "ctl instance list")
                if options.json { return ControlOutput.printJSON(reply) }
                print(reply.message ?? template)
                for record in reply.instances ?? [] {
                    let values = record.values.count > 1 ? "  " + record.valuesText : ""
                    print("  \(record.identifier)\(values)")
                }
                if let next = reply.nextAfter { print("more: refreshd ctl instance list \(template) --after \(next)") }
            }
        }
    }
}
