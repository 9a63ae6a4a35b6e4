import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import Synchronization

/// Live activities through the cluster fault loop (issue 32, item 6): each round starts, through
/// a live node, one activity that goes stale 4 s later and one that ends at once with a
/// dismissal 6 s later, in namespaces spread over the shards, so their deadlines fall while the
/// round's faults take their shards from node to node. A watcher reads the shared container
/// (what the leaders publish) every 100 ms and notes when each deadline was seen applied.
///
/// Proofs: every deadline applied, exactly at its instant in the state (`stateSince` is the stale
/// date; a takeover neither moves nor forgets it) and within the takeover bound of it in the
/// shared container; every dismissed activity gone from the container and from the state.
final class FaultLoopActivities: @unchecked Sendable {
    let root: String
    let shared: String
    /// One namespace a shard: the activities of round r go to namespace r % count.
    let namespaces: [String]
    /// Started activities: id → whether it is the dismissed kind.
    private let started = Mutex<[String: Bool]>([:])
    /// What the watcher saw: the first instant each activity's file showed `stale`, and the
    /// first instant a dismissed kind's file was gone after it had ended (with its policy's instant).
    private let seenStale = Mutex<[String: Instant]>([:])
    private let seenEnded = Mutex<[String: Instant]>([:])
    private let seenGone = Mutex<[String: Instant]>([:])
    private let running = Mutex(true)
    private var watcher: Thread?

    init(root: String, shared: String, namespaces: [String]) {
        self.root = root
        self.shared = shared
        self.namespaces = namespaces
    }

    func startWatching() {
        let watcher = Thread { [self] in
            while running.withLock({ $0 }) {
                look()
                usleep(100_000)
            }
        }
        watcher.start()
        self.watcher = watcher
    }

    func stopWatching() { running.withLock { $0 = false } }

    /// One look at the container's activity files.
    private func look() {
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        for (id, dismissed) in started.withLock({ $0 }) {
            let path = shared + "/activities/\(id).json"
            let activity = FileManager.default.contents(atPath: path).flatMap { try? JSONDecoder().decode(Activity.self, from: $0) }
            if let activity {
                if activity.state == .stale { seenStale.withLock { if $0[id] == nil { $0[id] = now } } }
                if dismissed, let by = activity.dismissalByPolicy { seenEnded.withLock { if $0[id] == nil { $0[id] = by } } }
            } else if dismissed, seenEnded.withLock({ $0[id] != nil }) {
                seenGone.withLock { if $0[id] == nil { $0[id] = now } }
            }
        }
    }

    /// Starts this round's two activities through the node whose state directory is `state`;
    /// a failure of the command is returned (the node may be mid-restart: another is tried).
    func startRound(_ round: Int, via states: [String]) -> String? {
        let namespace = namespaces[round % namespaces.count]
        let stale = "r\(round)-stale", gone = "r\(round)-gone"
        let commands: [(String, [String])] = [
            (stale, ["ctl", "activity", "start", stale, "--type", "Fault", "--namespace", namespace, "--stale-date", "+4s", "--progress", "0.5"]),
            (gone, ["ctl", "activity", "start", gone, "--type", "Fault", "--namespace", namespace]),
            (gone, ["ctl", "activity", "end", gone, "--dismissal", "+6s"]),
        ]
        for (id, arguments) in commands {
            var last = ""
            let done = states.contains { state in
                guard let cli = try? Node.start(arguments + ["--state", state], environment: [:], output: root + "/activity-\(id).log") else { return false }
                let status = cli.wait(30)
                last = cli.log()
                return status == 0
            }
            guard done else { return "round \(round): \(arguments.joined(separator: " ")) failed on every node: \(last)" }
            started.withLock { $0[id] = id == gone }
        }
        return nil
    }

    /// Waits (at most `limit` s) for every deadline of the started activities, then checks them
    /// against the state (`records`: every shard's saved activities) and what the watcher saw.
    func check(records: () throws -> [Activity], bound: Double, limit: Double) -> [String] {
        let ids = started.withLock { $0 }
        _ = waitFor(limit) {
            ids.allSatisfy { id, dismissed in
                dismissed ? seenGone.withLock { $0[id] != nil } : seenStale.withLock { $0[id] != nil }
            }
        }
        stopWatching()
        var failures: [String] = []
        let saved: [String: Activity]
        do {
            saved = Dictionary(try records().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            return ["activities: the state could not be read: \(error)"]
        }
        for (id, dismissed) in ids.sorted(by: { $0.key < $1.key }) {
            if dismissed {
                guard let gone = seenGone.withLock({ $0[id] }), let by = seenEnded.withLock({ $0[id] }) else {
                    failures.append("activity \(id): never dismissed in the shared container")
                    continue
                }
                let late = Double(gone.milliseconds - by.milliseconds) / 1000
                if late > bound { failures.append("activity \(id): dismissed \(late) s after its policy's instant (bound \(bound) s)") }
                if let record = saved[id], record.state != .dismissed {
                    failures.append("activity \(id): still \(record.state) in the state after its dismissal")
                }
            } else {
                guard let record = saved[id] else {
                    failures.append("activity \(id): not in the state")
                    continue
                }
                guard record.state == .stale, let staleDate = record.staleDate else {
                    failures.append("activity \(id): \(record.state) in the state, expected stale")
                    continue
                }
                if record.stateSince != staleDate {
                    failures.append("activity \(id): stale since \(record.stateSince), its stale date is \(staleDate)")
                }
                guard let seen = seenStale.withLock({ $0[id] }) else {
                    failures.append("activity \(id): never published stale")
                    continue
                }
                let late = Double(seen.milliseconds - staleDate.milliseconds) / 1000
                if late > bound { failures.append("activity \(id): published stale \(late) s after its stale date (bound \(bound) s)") }
            }
        }
        return failures
    }

    /// How many activities were started, for the report.
    var count: Int { started.withLock { $0.count } }
}
