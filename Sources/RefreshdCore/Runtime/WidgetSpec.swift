
/// A timeline job's widget, as its job file declares it: the widget kind, the families on
/// screen, the reload budget and where its timelines come from.
///
/// The runtime declares one provider identifier per family (`<job>#<family>`), so each family's
/// provider call is an ordinary run (allowance, expiration, results channel, history) and the
/// provider is asked once per family per reload, as WidgetKit does.
public struct WidgetSpec: Sendable, Hashable {
    /// Where timelines come from.
    public enum Provider: Sendable, Hashable {
        /// The job's command, once per family; it prints one timeline on its results channel.
        case command
        /// A built-in provider run in process (`provider: playlist` reads the staged wallpaper
        /// playlist from the shared container); it finds its family with
        /// `WidgetSpec.family(ofProviderIdentifier:)` and returns the timeline as its result.
        case action(ActionSpec)
    }

    /// The widget kind (WidgetKit's `kind` string), e.g. `wallpaper`.
    public var kind: String
    /// The families on screen, each once (several instances of a family count as one).
    public var families: [String]
    /// Non-exempt reloads per family in any trailing 24 hours; nil is unlimited (development).
    public var budget: Int?
    /// How long a provider's upstream fetch is shared by the other families of the kind (the
    /// per-kind cache directory `REFRESH_WIDGET_CACHE`); zero shares nothing.
    public var sharedFetch: Duration
    public var provider: Provider
    /// The least time between two counted reloads of one family (`min-reload-interval:`).
    public var minReloadInterval: Duration
    /// Who shares the budget (`budget-scope:`).
    public var budgetScope: BudgetScope = .family

    /// Who shares a reload budget: each family its own (Apple's documentation, the default),
    /// all families of the kind, or every widget kind of the job's namespace (the app:
    /// developers report kinds "compete for that same budget").
    public enum BudgetScope: String, Sendable, Hashable, CaseIterable {
        case family, kind, namespace
    }

    /// The timeline machine's budget group for this widget of a job in `namespace`.
    public func budgetGroup(namespace: String) -> String? {
        switch budgetScope {
        case .family: nil
        case .kind: "kind \(kind)"
        case .namespace: "namespace \(namespace)"
        }
    }

    /// The families WidgetKit knows, in its order.
    public static let knownFamilies = [
        "systemSmall", "systemMedium", "systemLarge", "systemExtraLarge",
        "accessoryRectangular", "accessoryCircular", "accessoryInline",
    ]
    /// iOS's range is 40-70 a day for a frequently viewed widget; 50 is its middle.
    public static let defaultBudget = 50
    /// iOS spaces one widget's reloads; "about every 5 minutes" is commonly cited, unconfirmed.
    public static let defaultMinReloadInterval = Duration.seconds(300)

    public init(kind: String, families: [String], budget: Int? = WidgetSpec.defaultBudget,
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
    public static func providerIdentifier(job: String, family: String) -> String { "\(job)#\(family)" }

    /// The family a provider identifier names (the text after the last `#`).
    public static func family(ofProviderIdentifier identifier: String) -> String? {
        guard let hash = identifier.lastIndex(of: "#") else { return nil }
        return String(identifier[identifier.index(after: hash)...])
    }
}
