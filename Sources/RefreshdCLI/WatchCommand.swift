import ArgumentParser
import Foundation
import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// `refreshd watch`: a live view of the running refreshd, pushed by it over the control socket
/// (a subscription: observations and snapshots as they happen, never polled). On a terminal the
/// screen is redrawn in place (and once a second, for the countdowns and bars); otherwise it
/// prints the first screen, then one plain line per event.
package struct WatchCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Live view of the running refreshd: next due requests, running jobs, widgets, activities, latest events.")

    @Option(name: .long, help: "State directory of the running refreshd.")
    var state = ".refreshd"

    @Option(name: .customLong("for"), help: "Stop after this many seconds (default: until refreshd stops or Ctrl-C).")
    var seconds: Double?

    @Flag(help: "Print each pushed line as it comes (the control protocol's JSON).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Show one instance of a template, unfolded: its requests, runs, failures and events "
        + "(with --json: only its events).", valueName: "template[key]"))
    var instance: String?

    package func validate() throws {
        if let instance, InstanceName.split(instance) == nil {
            throw ValidationError("--instance: expected template[key] (a key of \(InstanceName.keyExpectation)), found \(EchoText.quoted(instance, limit: 80))")
        }
    }

    package func run() throws {
        let (client, first, initial) = subscribe()
        var snapshot = initial
        var timelines = first.timelines
        var activities = first.activities
        // Cluster mode: who leads each shard (the snapshot is every shard's, from the database).
        var cluster = first.cluster
        let tty = isatty(1) == 1 && !json
        let end = seconds.map { Date().addingTimeInterval($0) }
        var events: [RuntimeObservation] = []
        var serverOffset: Int64 = (first.now?.milliseconds ?? 0) - Self.nowMilliseconds()
        client.setTimeout(tty ? .seconds(1) : .milliseconds(250))
        if json {
            ControlOutput.printJSON(first)
        } else if !tty {
            let now = Instant(milliseconds: Self.nowMilliseconds() + serverOffset)
            // The latest events come next, pushed after the reply, then each new one.
            for line in Self.screen(WatchView.render(snapshot: snapshot, events: [], now: now, timelines: timelines,
                                                     activities: activities, instance: instance, eventsFollow: true),
                                    cluster, snapshot) {
                print(line)
            }
            fflush(nil)
        }
        while end.map({ Date() < $0 }) ?? true {
            var push: ControlReply?
            do {
                guard let reply = try client.read() else { break }  // refreshd stopped
                push = reply
            } catch ControlClient.Failure.timedOut {
                push = nil
            } catch {
                ControlOutput.stderr("refreshd: watch: \(error)")
                throw ExitCode(1)
            }
            if let push {
                if let now = push.now { serverOffset = now.milliseconds - Self.nowMilliseconds() }
                // One instance: the other identifiers' events are not its (snapshots still are).
                let others = instance != nil && push.observation.map { $0.identifier != instance } == true
                if json {
                    if !others, let data = try? JSONEncoder().encode(push) { print(String(decoding: data, as: UTF8.self)) }
                    continue
                }
                if let observation = push.observation, !others {
                    events.append(observation)
                    if events.count > 50 { events.removeFirst(events.count - 50) }
                    if !tty { print(WatchView.eventLine(observation)) }
                }
                if let s = push.snapshot { snapshot = s }
                if let c = push.cluster {
                    if !tty, let old = cluster { for line in c.changes(from: old) { print(line) } }
                    cluster = c
                }
                if let t = push.timelines { timelines = t }
                if let a = push.activities {
                    if !tty && a != activities {
                        for entry in a.activities where !(activities?.activities.contains(entry) ?? false) {
                            print("  activity " + WatchView.activityLine(entry))
                        }
                    }
                    activities = a
                }
            }
            if tty {
                let now = Instant(milliseconds: Self.nowMilliseconds() + serverOffset)
                let screen = Self.screen(WatchView.render(snapshot: snapshot, events: events, now: now, timelines: timelines,
                                                          activities: activities, width: Self.width(), instance: instance),
                                         cluster, snapshot)
                // Home, draw, clear what is left of the old screen.
                print("\u{1B}[H" + screen.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J", terminator: "")
            }
            fflush(nil)  // a pipe or a file sees each event as it comes
        }
        if tty { print("") }
    }

    /// The subscription to the running refreshd and its first reply with the snapshot; exits
    /// with the failure printed (as JSON with `--json`) when there is none.
    func subscribe() -> (ControlClient, ControlReply, SchedulerSnapshot) {
        let client: ControlClient
        let first: ControlReply
        do {
            client = try ControlClient.connect(stateDirectory: state)
            first = try client.request(ControlRequest(.subscribe))
        } catch {
            let code: String = if case .notRunning = error { "not-running" } else { "connection" }
            ControlOutput.fail(ControlFailure(code: code, message: "\(error)"), json: json, command: "watch")
        }
        guard first.ok, let snapshot = first.snapshot else {
            ControlOutput.fail(first.error ?? ControlFailure(code: "internal", message: "no snapshot"), json: json, command: "watch")
        }
        return (client, first, snapshot)
    }

    /// The view's lines, with the cluster's section after the first line in cluster mode.
    static func screen(_ lines: [String], _ cluster: ClusterStatus?, _ snapshot: SchedulerSnapshot) -> [String] {
        guard let cluster, !lines.isEmpty else { return lines }
        return [lines[0], ""] + cluster.watchLines(runs: snapshot.runs) + lines.dropFirst()
    }

    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func width() -> Int {
        var size = winsize()
        return ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }
}
