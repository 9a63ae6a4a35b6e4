import Foundation
import RefreshdCore
import RefreshdRuntime

/// The built-in actions of a simulation's jobs, and their models: `stage-playlist` and the
/// `playlist` provider run as the ACTIONS they are (the runtime launches them, expires and kills
/// them through their context, as in production), and the simulated host runs each as a
/// modelled run (`SimulatedHost.ActionBehaviour`): its job's `simulate:` duration, outcome and
/// faults, the results the models compute on one shared `ContainerModel`, no image decoded.
/// `refreshd simulate --exec` runs the real bodies instead.
///
/// The models read the actions' options from their `ActionSpec` fingerprints (canonical
/// `key=value` lines), so the simulation needs nothing from the config layer.
struct SimulatedActions: Sendable {
    /// Modelled staging jobs, by identifier.
    var staging: [String: StagingModel] = [:]
    /// Modelled playlist widgets, by their timeline job's identifier.
    var playlists: [String: PlaylistModel] = [:]
    let container = ContainerModel()

    static let stageActionName = "stage-playlist"
    static let playlistProviderName = "playlist"

    /// The modelled actions as the runtime sees them: `stage-playlist` runs in a worker process
    /// (so the simulated host models a worker: SIGTERM at the expiration, SIGKILL after the grace,
    /// a crash), the playlist provider in refreshd's process, as the daemon's binding has them.
    /// Their bodies never run: the models (`SimulatedHost.ActionBehaviour`) give each run's
    /// duration and result.
    static let binding = ActionBinding([
        stageActionName: { spec in
            BuiltInAction(name: spec.name, worker: .init(payload: spec.payload, memoryLimit: 0)) { _ in
                ActionResult(success: false, log: ["\(spec.name): modelled, its body does not run in simulation"])
            }
        },
        playlistProviderName: { spec in
            BuiltInAction(name: spec.name) { _ in
                ActionResult(success: false, log: ["\(spec.name): modelled, its body does not run in simulation"])
            }
        },
    ])

    /// The models of the specs' built-in actions (the specs themselves run unchanged).
    static func model(_ specs: [JobSpec]) -> SimulatedActions {
        var actions = SimulatedActions()
        for spec in specs {
            if let action = spec.action, action.name == stageActionName, let model = StagingModel(fingerprint: action.fingerprint) {
                actions.staging[spec.identifier] = model
            }
            if case let .action(provider)? = spec.widget?.provider, provider.name == playlistProviderName {
                actions.playlists[spec.identifier] = PlaylistModel(fingerprint: provider.fingerprint)
            }
            // A timeline template's instances read their playlists as its provider says, each
            // from its own folder (`PlaylistModel.filled`; the container keeps days by folder).
            if case let .action(provider)? = spec.template?.widget?.provider, provider.name == playlistProviderName {
                actions.playlists[spec.identifier] = PlaylistModel(fingerprint: provider.fingerprint)
            }
        }
        return actions
    }

    /// A modelled run (what a command's model gives: duration, exit, output, results) as the
    /// action's behaviour: exit 0 returns success, another status a failure, a signal is its
    /// worker's crash; the output lines are the action's log. `ignoresExpiration` is the job's
    /// `ignores-sigterm`, or always for an action whose body never looks at `isExpired`.
    static func behaviour(_ run: SimulatedHost.Behaviour, whenExpired: ActionResult,
                          ignoresExpiration: Bool) -> SimulatedHost.ActionBehaviour {
        var crash: Int32?
        if case let .signaled(signal) = run.exit { crash = signal }
        return SimulatedHost.ActionBehaviour(
            duration: run.duration,
            result: ActionResult(success: run.exit == .exited(0), results: run.results, log: run.output),
            whenExpired: whenExpired, ignoresExpiration: run.ignoresTerminate || ignoresExpiration, crashSignal: crash)
    }

    /// The staging model of a job, or of an instance's template (issue 23: an instance stages
    /// as its template's options say, into its own folder: `StagingModel.filled`).
    func stagingModel(_ identifier: String) -> StagingModel? {
        guard !staging.isEmpty else { return nil }
        return staging[identifier] ?? InstanceName.split(identifier).flatMap { staging[$0.template] }
    }

    /// A modelled staging run starting: its days wait in its folder of the container for the
    /// run's end. `values`: an instance's, when its template's `stage-playlist.folder` or
    /// `widget` holds placeholders: the run stages into its instance's folder and reloads its
    /// instance's kind (`InstanceKind`), as the real stager does.
    func stagingStarted(_ order: LaunchOrder, model: StagingModel, values: [String: String]? = nil) -> [String] {
        let run = values.map { model.filled($0) } ?? model
        container.begin(runID: order.runID, folder: run.folder, days: run.days(at: order.started, container: container))
        return [run.resultLine]
    }

    /// Runs ended, as the store commits them: a staging run's days are staged on success. (From
    /// the commits, not the runtime's observations: the simulator leaves the per-run events
    /// off unless a violation needs them for its report.)
    func fold(_ changes: [StateChange]) {
        guard !staging.isEmpty else { return }
        for case let .runEnded(runID, identifier, _, outcome, _, _, _, _, _) in changes where stagingModel(identifier) != nil {
            container.finish(runID: runID, success: outcome == .success)
        }
    }

    // MARK: Reading options and dates

    /// `key=value` lines to a dictionary (the first `=` splits).
    static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return fields
    }

    /// `HH:MM` to minutes after midnight.
    static func minute(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return h * 60 + m
    }

    static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The civil date (`YYYY-MM-DD`) of `t` in `zone`, moved by `plusDays`.
    static func date(of t: Instant, zone: TimeZone, plusDays: Int = 0) -> String {
        let calendar = calendar(zone)
        let base = Date(timeIntervalSince1970: Double(t.milliseconds) / 1000)
        let day = calendar.date(byAdding: .day, value: plusDays, to: calendar.startOfDay(for: base)) ?? base
        let c = calendar.dateComponents([.year, .month, .day], from: day)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// Local midnight of a `YYYY-MM-DD` date in `zone` (the epoch for a malformed date).
    static func startOfDay(_ date: String, zone: TimeZone) -> Instant {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
              let d = calendar(zone).date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else {
            return Instant(milliseconds: 0)
        }
        return Instant(milliseconds: Int64((d.timeIntervalSince1970 * 1000).rounded()))
    }
}
