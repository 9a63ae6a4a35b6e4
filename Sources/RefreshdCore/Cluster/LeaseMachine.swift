/// One node's shard leases (issue 24): which shards it leads, when it renews, when it must stop
/// leading on its own, which shards it takes and which it gives back. Pure: an event and the
/// node's MONOTONIC instant in, effects out; no clock, no I/O, no lock. The node engine
/// (`ClusterNode`) makes the database calls the effects name and reports their answers as
/// events, each carrying the monotonic instant at which its call was SENT.
///
/// The rules (ARCHITECTURE.md, "Several nodes"):
/// - A shard is led only after its acquire was confirmed, and only until (send instant of the
///   last confirmed renewal or acquire + lease − margin) on the node's own monotonic clock. Past
///   that instant the node fences the shard itself (stop leading, kill its runs) at the first
///   event it handles, before anything else of that event: a node resuming from a long pause
///   fences before it acts. The database's expiry is at least (send + lease) in its own time,
///   so the self-fence comes first as long as the node's clock does not run slow by more than
///   margin / lease (20% with the defaults).
/// - Every `renewEvery` (lease / 3) the node surveys (heartbeat, lease table) and renews each
///   shard it leads.
/// - It takes free or expired shards up to its share, ceil(shards / live nodes), and hands
///   back the shards above its share when a node joins: it stops launching there, lets the runs
///   in flight end (within their allowance), then releases (`handOver`, then `drained`).
/// - A renewal the database refused, or a commit refused by the fence, fences the shard.
/// - A stop signal (SIGTERM, SIGINT) reaches every shard's runtime (its own rule: the first
///   stops gracefully, a second kills at once); from the first one on the node takes no shard,
///   releases each as its runs end (renewing it meanwhile, or fencing it at its deadline), and
///   has left once it holds none (`left`). A node cut off from the database therefore leaves by
///   its self-fence deadline at the latest, whatever its calls are doing.
package struct LeaseMachine: Sendable, Hashable {
    package struct Settings: Sendable, Hashable {
        /// How long a lease lasts past its acquire or renewal, in database time.
        package var lease: Duration
        /// How often leases are renewed and the node surveys the cluster (lease / 3).
        package var renewEvery: Duration
        /// How long before the lease's end the node stops leading on its own.
        package var margin: Duration

        package init(lease: Duration = .seconds(10), renewEvery: Duration? = nil, margin: Duration? = nil) {
            self.lease = lease
            self.renewEvery = renewEvery ?? lease / 3
            self.margin = margin ?? lease / 5
        }

        /// The node's own deadline for a lease whose last confirmed call was sent at `sent`.
        package func selfFence(sentAt sent: Instant) -> Instant { sent + (lease - margin) }
    }

    /// Why a shard stopped being led.
    package enum FenceReason: Sendable, Hashable, CustomStringConvertible {
        /// No renewal confirmed by send + lease − margin on the node's monotonic clock.
        case renewalNotConfirmed(deadline: Instant)
        /// The database refused the renewal: the lease is gone.
        case renewalRefused
        /// A commit of the shard's runtime was refused (`ShardFenced`) or failed.
        case commitRefused(String)

        package var description: String {
            switch self {
            case let .renewalNotConfirmed(deadline): "no renewal confirmed by \(deadline.milliseconds) ms (monotonic): fencing itself"
            case .renewalRefused: "the database refused the renewal: the lease is gone"
            case let .commitRefused(why): "a commit was refused: \(why)"
            }
        }
    }

    package enum Event: Sendable, Hashable {
        /// The node starts (or its timer fired): survey and renew when due.
        case tick
        /// The survey's answer: the nodes alive, every lease, the database's clock.
        case surveyed(live: [String], leases: [ShardLease], databaseNow: Instant)
        /// The survey failed (database unreachable).
        case surveyFailed
        /// An acquire sent at `sentAt` was answered: the lease, or nil when refused.
        case acquired(shard: Int, lease: ShardLease?, sentAt: Instant)
        /// An acquire could not be made (database unreachable).
        case acquireFailed(shard: Int)
        /// A renewal sent at `sentAt` was answered: the lease, or nil when refused (lost).
        case renewed(shard: Int, epoch: Int64, lease: ShardLease?, sentAt: Instant)
        /// A renewal could not be made (database unreachable): counts as not confirmed.
        case renewFailed(shard: Int, epoch: Int64)
        /// The shard's runtime had a commit refused (`ShardFenced`) or failed.
        case commitFailed(shard: Int, epoch: Int64, reason: String)
        /// A shard being handed over has no run in flight any more.
        case drained(shard: Int)
        /// A stop signal (`signal`: SIGTERM, SIGINT) reached the node.
        case stopSignal(String)
    }

    package enum Effect: Sendable, Hashable {
        /// Heartbeat, then read the lease table and the database's clock (`.surveyed`).
        case survey
        case acquire(shard: Int)
        case renew(shard: Int, epoch: Int64)
        case release(shard: Int, epoch: Int64)
        /// Restore the shard from the database (as a restart after kill -9 does) and lead it.
        case lead(shard: Int, epoch: Int64)
        /// Stop launching in the shard and let its runs end; report `.drained` when none is left.
        case handOver(shard: Int, epoch: Int64)
        /// Stop leading: expire then kill the shard's runs at once, commit nothing more.
        case fence(shard: Int, epoch: Int64, reason: FenceReason)
        /// Pass the stop signal to the shard's runtime, which decides what it means (the first:
        /// graceful, a second: at once); the shard is released when its runs have ended.
        case stopShard(shard: Int, epoch: Int64, signal: String)
        /// End the node's heartbeat now (it is stopping): the others count it out at their next
        /// survey and take the shards it releases then, not a heartbeat's life later.
        case withdraw
        /// The node stopped: it holds no shard and takes none; the host may exit.
        case left
        /// Call back with `.tick` at this monotonic instant (replaces the previous arming).
        case armTimer(at: Instant)
    }

    /// A shard this node holds or is getting.
    package enum ShardState: Sendable, Hashable {
        /// An acquire is on its way.
        case acquiring
        /// Led at `epoch`; `confirmed` is the send instant of the last confirmed acquire or renewal.
        case leading(epoch: Int64, confirmed: Instant)
        /// Still held (and renewed) while its runs end; released when drained.
        case handingOver(epoch: Int64, confirmed: Instant)

        package var epoch: Int64? {
            switch self {
            case .acquiring: nil
            case let .leading(epoch, _), let .handingOver(epoch, _): epoch
            }
        }

        package var confirmed: Instant? {
            switch self {
            case .acquiring: nil
            case let .leading(_, confirmed), let .handingOver(_, confirmed): confirmed
            }
        }
    }

    package let node: String
    package let shardCount: Int
    package let settings: Settings
    package private(set) var shards: [Int: ShardState] = [:]
    /// The nodes alive at the last survey (this one included once it has surveyed).
    package private(set) var live: [String] = []
    /// When the next survey and renewals are due (nil: at the next tick).
    package private(set) var nextRenewal: Instant?
    /// Stop signals received: from the first one on, no shard is taken.
    package private(set) var stopSignals = 0
    /// Whether `left` was answered (once).
    package private(set) var hasLeft = false

    package init(node: String, shardCount: Int, settings: Settings = Settings()) {
        precondition(shardCount > 0, "a cluster has at least one shard")
        self.node = node
        self.shardCount = shardCount
        self.settings = settings
    }

    /// The shards led now (not the ones being handed over), by shard.
    package var led: [Int: Int64] {
        var out: [Int: Int64] = [:]
        for (shard, state) in shards { if case let .leading(epoch, _) = state { out[shard] = epoch } }
        return out
    }

    /// Whether `shard` may launch at `now`: led, and before its self-fence instant.
    package func mayLaunch(shard: Int, at now: Instant) -> Bool {
        guard case let .leading(_, confirmed)? = shards[shard] else { return false }
        return now < settings.selfFence(sentAt: confirmed)
    }

    /// Whether the term of `shard` at `epoch` may still write what its runs made (a widget's
    /// publication into the shared container) at `now`: held at that epoch, led or being handed
    /// over (its runs still end), before its self-fence instant. A node paused or cut off past
    /// that instant writes nothing more, whatever was queued before (issue 32).
    package func mayWrite(shard: Int, epoch: Int64, at now: Instant) -> Bool {
        guard let state = shards[shard], state.epoch == epoch, let confirmed = state.confirmed else { return false }
        return now < settings.selfFence(sentAt: confirmed)
    }

    /// This node's even share of the shards: ceil(shards / live nodes).
    package var share: Int {
        let nodes = max(1, live.count + (live.contains(node) ? 0 : 1))
        return (shardCount + nodes - 1) / nodes
    }

    /// Handles one event at the node's monotonic instant `now`. Expired leases are fenced
    /// first, whatever the event.
    package mutating func handle(_ event: Event, at now: Instant) -> [Effect] {
        guard !hasLeft else { return [] }  // a node that left is not called again
        var effects: [Effect] = []
        fenceExpired(at: now, into: &effects)
        switch event {
        case .tick:
            if nextRenewal.map({ now >= $0 }) ?? true {
                nextRenewal = now + settings.renewEvery
                // A stopping node renews what it still holds and surveys no more (it takes nothing).
                if stopSignals == 0 { effects.append(.survey) }
                for shard in shards.keys.sorted() {
                    if let epoch = shards[shard]?.epoch { effects.append(.renew(shard: shard, epoch: epoch)) }
                }
            }
        case let .surveyed(live, leases, databaseNow):
            self.live = live
            rebalance(leases: leases, databaseNow: databaseNow, at: now, into: &effects)
        case .surveyFailed:
            break
        case let .acquired(shard, lease, sentAt):
            guard case .acquiring? = shards[shard] else { break }
            guard let lease, lease.owner == node else {
                shards[shard] = nil
                break
            }
            if stopSignals > 0 {
                // Asked for before the stop signal: given back unused.
                shards[shard] = nil
                effects.append(.release(shard: shard, epoch: lease.epoch))
                break
            }
            if now >= settings.selfFence(sentAt: sentAt) {
                // Confirmed too late to lead safely: give it back at once.
                shards[shard] = nil
                effects.append(.release(shard: shard, epoch: lease.epoch))
                break
            }
            shards[shard] = .leading(epoch: lease.epoch, confirmed: sentAt)
            effects.append(.lead(shard: shard, epoch: lease.epoch))
        case let .acquireFailed(shard):
            if case .acquiring? = shards[shard] { shards[shard] = nil }
        case let .renewed(shard, epoch, lease, sentAt):
            guard let state = shards[shard], state.epoch == epoch else { break }
            guard let lease, lease.owner == node, lease.epoch == epoch else {
                shards[shard] = nil
                effects.append(.fence(shard: shard, epoch: epoch, reason: .renewalRefused))
                break
            }
            let confirmed = max(sentAt, state.confirmed ?? sentAt)
            switch state {
            case .leading: shards[shard] = .leading(epoch: epoch, confirmed: confirmed)
            case .handingOver: shards[shard] = .handingOver(epoch: epoch, confirmed: confirmed)
            case .acquiring: break
            }
        case .renewFailed:
            break  // the self-fence instant stays; the next tick tries again
        case let .commitFailed(shard, epoch, reason):
            guard let state = shards[shard], state.epoch == epoch else { break }
            shards[shard] = nil
            effects.append(.fence(shard: shard, epoch: epoch, reason: .commitRefused(reason)))
        case let .drained(shard):
            guard case let .handingOver(epoch, _)? = shards[shard] else { break }
            shards[shard] = nil
            effects.append(.release(shard: shard, epoch: epoch))
        case let .stopSignal(signal):
            stopSignals += 1
            if stopSignals == 1 { effects.append(.withdraw) }
            for shard in shards.keys.sorted() {
                switch shards[shard]! {
                case .acquiring: continue
                case let .leading(epoch, confirmed):
                    shards[shard] = .handingOver(epoch: epoch, confirmed: confirmed)
                    effects.append(.stopShard(shard: shard, epoch: epoch, signal: signal))
                case let .handingOver(epoch, _):
                    effects.append(.stopShard(shard: shard, epoch: epoch, signal: signal))
                }
            }
        }
        if stopSignals > 0, shards.isEmpty, !hasLeft {
            hasLeft = true
            effects.append(.left)
        }
        armTimer(into: &effects)
        return effects
    }

    /// Fences every shard whose self-fence instant has come, in shard order.
    mutating func fenceExpired(at now: Instant, into effects: inout [Effect]) {
        for shard in shards.keys.sorted() {
            guard let state = shards[shard], let epoch = state.epoch, let confirmed = state.confirmed else { continue }
            let deadline = settings.selfFence(sentAt: confirmed)
            guard now >= deadline else { continue }
            shards[shard] = nil
            effects.append(.fence(shard: shard, epoch: epoch, reason: .renewalNotConfirmed(deadline: deadline)))
        }
    }

    /// Takes free or expired shards up to the share; hands back the ones above it.
    mutating func rebalance(leases: [ShardLease], databaseNow: Instant, at now: Instant, into effects: inout [Effect]) {
        guard stopSignals == 0 else { return }  // a stopping node takes nothing and hands over everything already
        let share = self.share
        let held = shards.values.filter { if case .handingOver = $0 { return false } else { return true } }.count
        if held < share {
            // Free: never held, expired in database time, or held by a node no longer alive.
            // Tried from this node's own starting point so that nodes do not all race for the
            // same shard.
            let start = (live.firstIndex(of: node) ?? 0) * shardCount / max(1, live.count)
            var wanted = share - held
            for i in 0..<shardCount where wanted > 0 {
                let shard = (start + i) % shardCount
                guard shards[shard] == nil else { continue }
                let lease = leases.first { $0.shard == shard }
                // (Its own lease from an earlier life is taken back with a new epoch.)
                let free = lease.map {
                    $0.owner == nil || $0.owner == node || $0.expiresAt <= databaseNow || !live.contains($0.owner!)
                } ?? true
                guard free else { continue }
                shards[shard] = .acquiring
                effects.append(.acquire(shard: shard))
                wanted -= 1
            }
        } else if held > share {
            // A node joined: give back the shards above the share, the highest first, but
            // only while some live node holds fewer than the share (it will take them).
            let counts = Dictionary(grouping: leases.filter { $0.owner != nil && $0.expiresAt > databaseNow }, by: { $0.owner! })
                .mapValues(\.count)
            guard live.contains(where: { $0 != node && counts[$0, default: 0] < share }) else { return }
            var surplus = held - share
            for shard in shards.keys.sorted(by: >) where surplus > 0 {
                guard case let .leading(epoch, confirmed)? = shards[shard] else { continue }
                shards[shard] = .handingOver(epoch: epoch, confirmed: confirmed)
                effects.append(.handOver(shard: shard, epoch: epoch))
                surplus -= 1
            }
        }
    }

    /// The one timer: the next survey, or the earliest self-fence instant if sooner.
    func armTimer(into effects: inout [Effect]) {
        guard !hasLeft else { return }
        var next = nextRenewal
        for state in shards.values {
            guard let confirmed = state.confirmed else { continue }
            let deadline = settings.selfFence(sentAt: confirmed)
            if next == nil || deadline < next! { next = deadline }
        }
        if let next { effects.append(.armTimer(at: next)) }
    }
}
