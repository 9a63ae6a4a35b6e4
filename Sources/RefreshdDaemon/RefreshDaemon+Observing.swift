import Foundation
import Glibc
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// What a cluster node shows while it runs: the cluster pushed to `watch` subscribers, and the
/// `--metrics-file` rewritten every renewal interval.
extension RefreshDaemon {
    /// Starts pushing the cluster to the watchers every second (any thread), unless it runs:
    /// the control loop reads the database and pushes (`ControlServer.pushClusterView`), and
    /// the timer stops itself once nobody watches (no wake-up when nobody does).
    func startWatchTimer() {
        watchTimer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: .global())
            source.schedule(deadline: .now() + 1, repeating: 1)
            source.setEventHandler { [weak self] in
                guard let self, let control = self.control else { return }
                let server = control.server
                control.scheduler.performOnLoop { [weak self] in
                    if !server.pushClusterView() { self?.stopWatchTimer() }
                }
            }
            source.resume()
            timer = source
        }
    }

    func stopWatchTimer() {
        watchTimer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }

    /// `--metrics-file`: writes the metrics text now and every renewal interval, on the control
    /// loop (its reads block on the database there, as the socket's `metrics` does). Decided
    /// periodic, not on every event as on one machine: most of the text is other nodes' work,
    /// which no event here announces, and the node already wakes every renewal interval.
    func startMetricsFile() {
        guard metricsFile != nil else { return }
        let every = LeaseMachine.Settings(lease: lease).renewEvery
        metricsTimer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: .global())
            source.schedule(deadline: .now(), repeating: .milliseconds(Int(every.wholeMilliseconds)))
            source.setEventHandler { [weak self] in
                guard let self, let control = self.control else { return }
                control.scheduler.performOnLoop { [weak self] in self?.writeMetricsFile() }
            }
            source.resume()
            timer = source
        }
    }

    /// Stops the periodic writes and writes the file once more (the node's last counters).
    func stopMetricsFile() {
        let stopped = metricsTimer.withLock { timer -> Bool in
            defer { timer = nil }
            timer?.cancel()
            return timer != nil
        }
        if stopped { writeMetricsFile() }
    }

    /// Replaces the metrics file (temporary file, then rename); a failure is logged once. One
    /// write at a time (the last one, at the stop, runs on the node thread).
    func writeMetricsFile() {
        metricsWriting.lock()
        defer { metricsWriting.unlock() }
        guard let path = metricsFile, let cluster = clusterControl else { return }
        let counters = node?.counters ?? ClusterNode.Counters()
        var failure: String?
        do {
            let text = try cluster.metricsText(counters: counters, launches: launchCount.withLock { $0 })
            failure = MetricsExporter.writeReplacing(path, with: text)
        } catch {
            failure = "cannot read the cluster's metrics: \(error)"
        }
        let report = metricsFileError.withLock { last -> Bool in
            defer { last = failure }
            return failure != nil && failure != last
        }
        if report, let failure { logger.warning("metrics file \(path): \(failure)") }
    }
}
