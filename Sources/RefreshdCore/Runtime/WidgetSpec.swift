
/// A timeline job's widget, as its job file declares it: the widget kind, the families on
/// screen, the reload budget and where its timelines come from.
///
/// The runtime declares one provider identifier per family (`<job>#<family>`), so each family's
/// provider call is an ordinary run (allowance, expiration, results channel, history) and the
/// provider is asked once per family per reload, as WidgetKit does.
package struct WidgetSpec: Sendable, Hashable {
    /// Where timelines come from.
    package enum Provider: Sendable, Hashable {
        /// The job's command, once per family; it prints one timeline on its results channel.
        case command
        /// A built-in provider run in process (`provider: playlist` reads the staged wallpaper
        /// playlist from the shared container); it finds its family with
        /// `WidgetSpec.family(ofProviderIdentifier:)` and returns the timeline as its result.
        case action(ActionSpec)
    }

    /// The widget kind (WidgetKit's `kind` string), e.g. `wallpaper`.
    package var kind: String
    /// The families on screen, each once (several instances of a family count as one).
    package var families: [String]
    /// Non-exempt reloads per family in any trailing 24 hours; nil is unlimited (development).
    package var budget: Int?
    /// How long a provider's upstream fetch is shared by the other families of the kind (the
    /// per-kind cache directory `REFRESH_WIDGET_CACHE`); zero shares nothing.
    package var sharedFetch: Duration
    package var provider: Provider
    /// The least time between two counted reloads of one family (`min-reload-interval:`).
    package var minReloadInterval: Duration
    /// Who shares the budget (`budget-scope:`).
    package var budgetScope: BudgetScope = .family

    /// Who shares a reload budget: each family its own (Apple's documentation, the default),
    /// all families of the kind, or every widget kind of the job's namespace (the app:
    /// developers report kinds "compete for that same budget").
    package enum BudgetScope: String, Sendable, Hashable, CaseIterable {
        case family, kind, namespace
    }

    /// The timeline machine's budget group for this widget of a job in `namespace`.
    package func budgetGroup(namespace: String) -> String? {
        switch budgetScope {
        case .family: nil
        case .kind: "kind \(kind)"
        case .namespace: "namespace \(namespace)"
        }
    }

    /// The families WidgetKit knows, in its order.
    package static let knownFamilies = [
        "systemSmall", "systemMedium", "systemLarge", "systemExtraLarge",
        "accessoryRectangular", "accessoryCircular", "accessoryInline",
    ]
    /// iOS's range is 40-70 a day for a frequently viewed widget; 50 is its middle.
    package static let defaultBudget = 50
    /// iOS spaces one widget's reloads; "about every 5 minutes" is commonly cited, unconfirmed.
    package static let defaultMinReloadInterval = Duration.seconds(300)

    package init(kind: String, families: [String], budget: Int? = WidgetSpec.defaultBudget,
                sharedFetch: Duration = .seconds(300), provider: Provider = .command,
                minReloadInterval: Duration = WidgetSpec.defaultMinReloadInterval) {
        self.kind = kind
        self.families = families
        self.budget = budget
        self.sharedFetch = sharedFetch
        self.provider = provider
        self.minReloadInterval = minReloadInterval
    }

    /// The scheduler identifier of one family's provider runs.
    package static func providerIdentifier(job: String, family: String) -> String { "\(job)#\(family)" }

    /// The family a provider identifier names (the text after the last `#`).
    package static func family(ofProviderIdentifier identifier: String) -> String? {
        guard let hash = identifier.lastIndex(of: "#") else { return nil }
        return String(identifier[identifier.index(after: hash)...])
    }
}

extension WidgetSpec {
    /// The run definition of one family's provider: its own identifier (`<job>#<family>`) in the
    /// widget's own namespace (`widget.<kind>`, so the families' reloads never count against
    /// other jobs' pending limits), with the job's allowance and grace.
    package func providerDefinition(of job: TaskDefinition, family: String) -> TaskDefinition {
        TaskDefinition(identifier: Self.providerIdentifier(job: job.identifier, family: family), kind: .processing,
                       namespace: "widget.\(kind)", allowance: job.allowance, grace: job.grace)
    }

    /// The command a family's provider runs: the job's, told the widget's kind and family, and
    /// where and how long the widget's shared fetch is cached.
    package func providerCommand(_ command: CommandJob, family: String, sharedContainer: String?) -> CommandJob {
        var job = command
        job.environment["REFRESH_WIDGET_KIND"] = kind
        job.environment["REFRESH_WIDGET_FAMILY"] = family
        job.environment["REFRESH_WIDGET_CACHE_TTL"] = String(sharedFetch.wholeMilliseconds / 1000)
        if let sharedContainer { job.environment["REFRESH_WIDGET_CACHE"] = "\(sharedContainer)/cache/widgets/\(kind)" }
        return job
    }

    /// The timeline machine's definition of this widget, for the job that provides it.
    package func definition(job: TaskDefinition, families: Set<WidgetFamily>) -> WidgetDefinition {
        WidgetDefinition(kind: kind, families: families, job: job.identifier,
                         budget: budget.map { .limited($0) } ?? .unlimited, minReloadInterval: minReloadInterval,
                         budgetGroup: budgetGroup(namespace: job.namespace))
    }
}
