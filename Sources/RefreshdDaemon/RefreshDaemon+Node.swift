import CLibUV
import Foundation
import Glibc
import Logging
import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// The node thread of `refreshd run` (issue 32: one daemon): its small libuv loop with the lease
/// machine's one timer, the wake-ups from other threads, the stop signals on a cluster node,
/// and the shards' loops it starts and waits for. Moved out of RefreshDaemon.swift.
extension RefreshDaemon {
    /// The default node name: the host name, stable across restarts (a restarted node retakes
    /// its shards at once with a new epoch, fencing its previous life). Two nodes on one machine
    /// need `--node`.
    package static func defaultNodeName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "refreshd" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "refreshd" : name
    }

    /// Commands were queued (NOTIFY, any thread): the node thread applies them for `shard`
    /// (nil: every shard it leads) at its next wake-up, which this sends.
    package func commandsQueued(shard: Int?) {
        queuedCommands.withLock { queued in
            if let shard { queued.shards.insert(shard) } else { queued.all = true }
        }
        wake()
    }

    /// A leader applied command `id` (nil: maybe any) (NOTIFY, any thread): the reply waiting
    /// for it reads its outcome (`ClusterControl+Outcomes`).
    package func commandsApplied(id: String?) {
        clusterControl?.commandsApplied(id: id)
    }

    /// Wakes the node thread (any thread): it settles the node and looks at its hosts.
    func wake() {
        asyncOpen.withLock { open in if open { _ = uv_async_send(async) } }
    }

    func prepareLoop() {
        uv_loop_init(loop)
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_async_init(loop, async) { handle in
            guard let data = handle?.pointee.data else { return }
            let daemon = Unmanaged<RefreshDaemon>.fromOpaque(data).takeUnretainedValue()
            if daemon.stopRequested.withLock({ requested in defer { requested = false }; return requested }) {
                daemon.leave()
            }
            daemon.node?.settle()
            let queued = daemon.queuedCommands.withLock { queued in
                defer { queued = (false, []) }
                return queued
            }
            if queued.all {
                daemon.node?.applyQueuedCommands(shard: nil)
            } else {
                for shard in queued.shards.sorted() { daemon.node?.applyQueuedCommands(shard: shard) }
            }
            daemon.afterNode()
        }
        async.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        asyncOpen.withLock { $0 = true }
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        // One machine's signals are its shard scheduler's (the runtime's rule, SIGHUP, SIGUSR1).
        for number in [SIGTERM, SIGINT, SIGHUP] where handleSignals && !isMachine {
            let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
            uv_signal_init(loop, handle)
            handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            uv_signal_start(handle, { handle, number in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<RefreshDaemon>.fromOpaque(data).takeUnretainedValue().stopSignal(number)
            }, number)
            signalHandles.append(handle)
        }
    }

    /// Asks the node thread to leave (any thread): `stop()` on a node, one machine's ended loop.
    func requestLeave() {
        stopRequested.withLock { $0 = true }
        wake()
    }

    /// Node thread: the node takes no shard any more and leaves once each is given up. A node's
    /// stop signal goes to every shard's runtime; one machine's runtime has heard it already.
    func leave() {
        if isMachine {
            node?.stopSignal("stop")
        } else {
            stopSignal(SIGTERM)
        }
    }

    func stopSignal(_ number: Int32) {
        if number == SIGHUP {
            // The watch follows inodes: SIGHUP re-arms it on what is at the path now.
            if let control = control?.scheduler {
                control.performOnLoop { for watch in control.directoryWatches { watch.rearm() } }
            }
            requestReload("SIGHUP")
            return
        }
        let name = number == SIGINT ? "SIGINT" : "SIGTERM"
        logger.info("received \(name): passed to every shard; the node takes no shard any more")
        node?.stopSignal(name)
        afterNode()
    }

    /// After every call into the node (node thread): starts the loops of shards just led, passes
    /// a stop on, forgets hosts whose loop ended, leaves when stopped, and re-arms the timer.
    func afterNode() {
        guard !done, let node else { return }
        let current = hostsLock.withLock { _ in
            hosts.removeAll { $0.started && $0.ended.withLock { $0 } }
            return hosts
        }
        for host in current where !host.started && host.restored.withLock({ $0 }) {
            host.started = true
            if isMachine, !machineRestored(host) { continue }
            startLoop(host)
        }
        if node.hasLeft {
            // Every shard released or fenced (a fenced one's groups already killed). Its loops
            // are given a moment to end (their sweeps kill what left the groups), the releases
            // on the calls thread a moment to reach the database (others then take the shards
            // at once rather than at the lease's end); never more, since a loop may be blocked
            // on an unreachable database.
            let now = Self.monotonicNow()
            let leftAt = self.leftAt ?? now
            self.leftAt = leftAt
            let limit = leftAt + .seconds(5)
            if current.contains(where: { $0.started && !$0.ended.withLock { $0 } }), now < limit {
                armTimer(at: limit)
                return
            }
            let sent = DispatchSemaphore(value: 0)
            calls.async { sent.signal() }
            _ = sent.wait(timeout: .now() + .milliseconds(Int(min(lease / 3, .seconds(2)).wholeMilliseconds)))
            finish()
            return
        }
        // Nothing polls: the timer is the lease machine's one instant; a drained hand-over, an
        // ended shard loop, a refused commit and a queued command wake the node (`wake`).
        guard let wakeUp = node.wakeUp else {
            uv_timer_stop(timer)
            return
        }
        armTimer(at: wakeUp)
    }

    /// Node thread: the node's one timer at the monotonic instant `at`.
    func armTimer(at: Instant) {
        let delay = max(.zero, at.duration(since: Self.monotonicNow()))
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let daemon = Unmanaged<RefreshDaemon>.fromOpaque(data).takeUnretainedValue()
            if let wakeUp = daemon.node?.wakeUp, wakeUp <= RefreshDaemon.monotonicNow() { daemon.node?.timerFired() } else { daemon.node?.settle() }
            daemon.afterNode()
        }, UInt64(delay.wholeMilliseconds), 0)
    }

    /// A shard's loop on a thread of its own; when it returns the node hears of it.
    func startLoop(_ host: ShardHost) {
        let logger = self.logger
        let thread = Thread { [weak self] in
            do {
                try host.scheduler.run()
            } catch let ended as SchedulerFailure where self?.isMachine ?? false {
                // One machine's state could not be committed: refreshd exits with it.
                self?.failure = ended
            } catch let ended as SchedulerFailure {
                // A fenced or handed-over shard's runtime ends this way: no longer this node's.
                logger.info("shard \(host.shard) (epoch \(host.epoch)) left: \(ended.message)")
            } catch {
                logger.warning("shard \(host.shard) (epoch \(host.epoch)) stopped: \(error)")
            }
            host.ended.withLock { $0 = true }
            guard let self else { return }
            // One machine's one loop ended (stopped, or failed): refreshd leaves.
            if isMachine { requestLeave() }
            wake()
        }
        thread.name = "refreshd-shard-\(host.shard)"
        thread.stackSize = 4 << 20
        thread.start()
    }

    func finish() {
        done = true
        uv_timer_stop(timer)
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
        asyncOpen.withLock { open in
            open = false
            uv_close(UnsafeMutableRawPointer(async).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
        for handle in signalHandles {
            uv_signal_stop(handle)
            uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
    }

    /// The node's monotonic clock (CLOCK_MONOTONIC: it runs on while the process is stopped).
    static func monotonicNow() -> Instant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Instant(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}

/// The steps of `run` before the node starts.
extension RefreshDaemon {
    /// A plain timeline job may not take the widget kind of an instance in the state (any
    /// shard's; one added at run time is in the state, not in the files): the start is refused
    /// at the job's widget.kind, as a reload is, and the instance keeps everything. A node may
    /// start while the database is away (it takes shards once it answers): then the check is
    /// the first reload's.
    func checkInstanceKinds(_ specs: [JobSpec], _ loaded: [JobConfig]) throws {
        do {
            let clashes = try StateReader(database: database, jobs: specs).instanceKindClashes(specs)
            if !clashes.isEmpty { throw ConfigErrors(kindClashes: clashes, in: loaded, advice: ConfigErrors.startClashAdvice) }
        } catch let errors as ConfigErrors {
            throw errors
        } catch {
            logger.warning("the instances' widget kinds could not be checked against the job files (the database did not answer: \(error))")
        }
    }

    /// The node that leads this daemon's shards, wired to it: its history in the log and the
    /// dashboard, commands and fences carried out on each shard's loop, its database calls on
    /// the calls thread, a restore waking the node thread.
    func makeNode(jobs specs: [JobSpec], options: RefreshRuntime.Options) -> ClusterNode {
        let node = ClusterNode(
            name: nodeName, database: database, jobs: specs, settings: LeaseMachine.Settings(lease: lease),
            options: options, monotonic: { Self.monotonicNow() },
            makeRuntime: { [unowned self] shard, epoch, store, options in try self.makeRuntime(shard, epoch, store, options) })
        // A namespace's live activities live in its shard (`ShardMap`): each shard's machine
        // takes the rules of `run`.
        if settings.activities != ActivitySettings() { node.activitySettings = settings.activities }
        let machine = isMachine
        node.onHistory = { [logger, nodeName, weak self] _, line in
            // One machine leads its one shard for its whole life: nothing to tell.
            if !machine { logger.info("node \(nodeName): \(line)") }
            // The node's instants are monotonic; the dashboard shows wall-clock times.
            let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            self?.recentHistory.withLock { lines in
                if lines.count >= ClusterNode.historyLimit { lines.removeFirst() }
                lines.append((now, line))
            }
        }
        // Operator commands are applied on the shard's own loop (its runtime's execution context).
        node.onShardContext = { [unowned self] shard, epoch, body in
            let host = hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }
            host?.scheduler.performOnLoop(body)
        }
        node.onFence = { [unowned self] shard, epoch in
            let host = hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }
            host?.scheduler.killLiveGroups()
        }
        node.callRunner = { [unowned self, unowned node] call in
            calls.async {
                node.deliver(call())
                self.wake()
            }
        }
        node.onRestored = { [unowned self] shard, epoch in
            hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }?.restored.withLock { $0 = true }
            wake()
        }
        return node
    }
}
