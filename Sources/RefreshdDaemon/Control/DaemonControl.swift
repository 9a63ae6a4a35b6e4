import Foundation
import Logging
import Refreshd
import RefreshdRuntime

/// How `refreshd run` is operated while it runs: the control socket, systemd's notifications
/// (READY=1 once restored and armed, STOPPING=1 on a graceful stop, WATCHDOG=1 keep-alives) and
/// the metrics, kept from the runtime's observations and written for node_exporter.
final class DaemonControl: @unchecked Sendable {
    let server: ControlServer
    let metrics = MetricsExporter()
    let notifier: SystemdNotifier
    let metricsFile: String?
    let logger: Logger
    private weak var scheduler: RefreshScheduler?
    // Loop thread only.
    private var metricsTimer: OneShotTimer?
    private var metricsArmed = false
    private var metricsDirty = false
    private var watchdogTimer: OneShotTimer?
    private var metricsErrorLogged = false
    /// At most one metrics file write per this interval (the file is for scrapers, not a log).
    static let metricsInterval: Duration = .seconds(1)

    /// Binds the control socket (the state directory's lock is already held) and wires metrics
    /// and notifications; nothing is sent to systemd before `ready()`.
    init(scheduler: RefreshScheduler, stateDirectory: String, metricsFile: String?,
         environment: [String: String], limits: ControlServer.Limits = .init(), logger: Logger) throws {
        self.scheduler = scheduler
        self.metricsFile = metricsFile
        self.logger = logger
        notifier = SystemdNotifier(environment: environment)
        // A job must not speak to systemd for refreshd.
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { scheduler.runtime.baseEnvironment[key] = nil }
        server = ControlServer(scheduler: scheduler, stateDirectory: stateDirectory, limits: limits)
        try server.start()
        let metrics = self.metrics
        server.metricsText = { [weak self] in
            if let runtime = self?.scheduler?.runtime { Self.recordAll(runtime, into: metrics) }
            return metrics.text()
        }
        server.listeners.append { [weak self] batch in self?.observed(batch) }
        if let interval = SystemdNotifier.keepAliveInterval(environment: environment), notifier.isEnabled {
            let timer = scheduler.makeTimer()
            watchdogTimer = timer
            keepAlive(every: interval)
        }
    }

    /// Restored and armed: tell systemd, and write the first metrics (loop thread).
    func ready() {
        guard let scheduler else { return }
        for id in scheduler.runtime.jobsInForce.keys { metrics.declare(id) }
        Self.recordAll(scheduler.runtime, into: metrics)
        writeMetrics()
        let pending = scheduler.runtime.snapshot().pending.count
        notifier.notify("READY=1\nSTATUS=\(pending) pending; control socket \(server.path)")
    }

    /// The gauges read from the machines' snapshots: requests, runs, widgets, activities.
    static func recordAll(_ runtime: RefreshRuntime, into metrics: MetricsExporter) {
        // Without the requests of instances neither failing nor paused: the metrics count them
        // (a million, copied and sorted after every batch of observations, held the loop for
        // seconds a launch).
        let (snapshot, pendingCount) = runtime.snapshot(quietInstances: false)
        metrics.record(snapshot, pendingCount: pendingCount)
        metrics.record(runtime.timelineSnapshot())
        metrics.record(runtime.activitySnapshot())
    }

    private func keepAlive(every interval: Duration) {
        notifier.notify("WATCHDOG=1")
        watchdogTimer?.start(after: interval) { [weak self] in self?.keepAlive(every: interval) }
    }

    /// A batch of observations (loop thread): metrics, and systemd on a stop.
    private func observed(_ batch: [RuntimeObservation]) {
        metrics.record(batch)
        if let runtime = scheduler?.runtime { Self.recordAll(runtime, into: metrics) }
        if batch.contains(where: { $0.kind == .stopping }) { notifier.notify("STOPPING=1") }
        if batch.contains(where: { $0.kind == .stopped }) {
            writeMetrics()
            return
        }
        guard metricsFile != nil else { return }
        metricsDirty = true
        guard !metricsArmed else { return }
        if metricsTimer == nil { metricsTimer = scheduler?.makeTimer() }
        metricsArmed = true
        metricsTimer?.start(after: Self.metricsInterval) { [weak self] in self?.metricsTick() }
    }

    private func metricsTick() {
        metricsArmed = false
        if metricsDirty { writeMetrics() }
    }

    private func writeMetrics() {
        metricsDirty = false
        guard let metricsFile else { return }
        if let error = metrics.writeFile(metricsFile) {
            if !metricsErrorLogged { logger.error("metrics not written: \(error)") }
            metricsErrorLogged = true
        } else {
            metricsErrorLogged = false
        }
    }
}
