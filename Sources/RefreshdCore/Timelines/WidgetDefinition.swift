/// A widget kind as a job file declares it: the families on screen, the job that provides its
/// timelines, its reload budget and the budget's window.
///
/// Declaring it again (a config reload) keeps the state of the families still on screen;
/// families no longer listed are withdrawn.
package struct WidgetDefinition: Sendable, Hashable {
    /// The widget kind, e.g. `design.example.wallpaper`.
    package var kind: String
    /// The families on screen (several instances of one family count as one).
    package var families: Set<WidgetFamily>
    /// The job identifier whose provider is run for this kind.
    package var job: String
    package var budget: ReloadBudget
    /// The trailing window the budget counts over (24 h, not reset at midnight).
    package var window: Duration
    /// After a failed reload that the policy or an explicit request asked for, the policy asks
    /// again this much later (a spent budget defers that retry like any reload). Nil: no retry,
    /// the widget waits for its next explicit or exempt reload.
    package var failureRetry: Duration?
    /// The least time between two provider calls of one widget (kind and family): a counted
    /// reload asked for sooner waits until then (exempt reloads do not wait, but start the
    /// interval). iOS does not reload a widget back to back; about 5 minutes is commonly cited
    /// and unconfirmed, hence a setting (`min-reload-interval:`, 5 min in job files). Zero: no
    /// spacing (the default here, for tests of the budget alone).
    package var minReloadInterval: Duration
    /// Widgets whose kinds name the same group share one budget: their counted reloads are
    /// counted together against each one's `budget` over its `window` (declare the same budget
    /// in every kind of a group). Nil: each family its own budget, as Apple documents; a
    /// group models developers' reports of "a per-app reload budget divided across all your
    /// widgets" (`budget-scope: kind` or `namespace` in job files).
    package var budgetGroup: String?

    package init(kind: String, families: Set<WidgetFamily>, job: String, budget: ReloadBudget = .default,
                window: Duration = .seconds(86_400), failureRetry: Duration? = .seconds(900),
                minReloadInterval: Duration = .zero, budgetGroup: String? = nil) {
        self.kind = kind
        self.families = families
        self.job = job
        self.budget = budget
        self.window = window
        self.failureRetry = failureRetry
        self.minReloadInterval = minReloadInterval
        self.budgetGroup = budgetGroup
    }

    /// The families in a stable order.
    package var sortedFamilies: [WidgetFamily] { families.sorted() }
}
