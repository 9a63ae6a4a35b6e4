import RefreshdCore

/// What the simulator needs of the runtime beyond its public API: a fault that empties the
/// widget budgets for a span, and the activities' records for the end-to-end audits.
extension RefreshRuntime {
    /// Sets the reload budget of every declared widget kind (nil: each back to `budgets[kind]`),
    /// as a config reload would: families keep their timelines, ledgers and stale spans.
    package func setWidgetBudgets(_ budget: ReloadBudget?, original budgets: [String: ReloadBudget] = [:]) {
        let definitions: [WidgetDefinition] = lock.withLock {
            machines.timelines.definitions.values.sorted { $0.kind < $1.kind }
        }
        for var definition in definitions {
            guard let new = budget ?? budgets[definition.kind], new != definition.budget else { continue }
            definition.budget = new
            feedTimeline(.declare(definition))
        }
    }

    /// Sets where the widget counter days begin (the simulator: the scenario's local days, so
    /// its report's rows are the days it labels). Before `load`: rows already made keep theirs.
    package func setWidgetCountingDays(_ days: CountingDays) {
        lock.withLock { machines.timelines.countingDays = days }
    }

    /// Turns the device's Low Power Mode on or off for the widget timelines (the rule, holding
    /// counted reloads while it is on, is the timeline machine's).
    package func setLowPowerMode(_ on: Bool) {
        feedTimeline(.lowPower(on))
    }

    /// Every activity the machine holds now (pending, active, stale, ended), by id.
    package func activityRecords() -> [String: Activity] {
        lock.withLock { machines.activities.activities }
    }
}
