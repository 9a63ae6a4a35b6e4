import RefreshdCore
import RefreshdRuntime

extension SimulatedHost: RealCommandsHost {
    /// A real command's event, reported as it happens: the clock moves to its instant, and the
    /// runtime that started the run (no other: one started after a crash) hears of it.
    package func reportReal<T>(instance: String, _ report: (RefreshRuntime) -> T) -> T? {
        if let now = real?.virtualNow { clock = max(clock, now) }
        guard let runtime, runtime.instance == instance else { return nil }
        return report(runtime)
    }

    /// While real commands run, virtual time runs with real time: waits until `instant` (the
    /// next event of virtual time) or a real event, whichever is first. True when a real event
    /// was reported first (the clock is at it); false at once without real commands.
    package func passRealTime(until instant: Instant?) -> Bool {
        real?.wait(until: instant, from: clock) ?? false
    }
}
