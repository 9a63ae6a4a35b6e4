/// Why a widget reload was asked for. Decides whether it counts against the budget and whether
/// its failure makes the widget stale.
package enum ReloadReason: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The timeline's `atEnd` policy: its last entry's date has come.
    case policyAtEnd
    /// The timeline's `after(date)` policy: the date has come.
    case policyAfter
    /// The policy asking again after a failed reload (`WidgetDefinition.failureRetry`).
    case retry
    /// An explicit reload from a job's result channel.
    case explicitJob
    /// An explicit reload through the library API (`reloadTimelines(ofKind:)`, `reloadAllTimelines()`).
    case explicitAPI
    /// A reload the system decides on its own (modelled in simulation).
    case system
    /// The family was placed on screen without a timeline: its first one.
    case added
    /// Exempt: the containing app is in the foreground.
    case appForeground
    /// Exempt: a widget-initiated intent.
    case widgetIntent
    /// Exempt: a significant time change.
    case significantTimeChange
    /// Exempt: a locale change.
    case localeChange

    /// Exempt reloads never count against the budget and are never deferred.
    package var isExempt: Bool {
        switch self {
        case .appForeground, .widgetIntent, .significantTimeChange, .localeChange: true
        default: false
        }
    }

    /// The policy or an explicit request asked for it (or the family has no timeline at all): if
    /// it cannot happen, the widget is stale, and a failure is retried.
    package var demandsFreshness: Bool {
        switch self {
        case .policyAtEnd, .policyAfter, .retry, .explicitJob, .explicitAPI, .added: true
        default: false
        }
    }

    /// `policy atEnd`, `explicit (job)`, `app foreground`...
    package var description: String {
        switch self {
        case .policyAtEnd: "policy atEnd"
        case .policyAfter: "policy after"
        case .retry: "retry after failure"
        case .explicitJob: "explicit (job)"
        case .explicitAPI: "explicit (API)"
        case .system: "system"
        case .added: "added to screen"
        case .appForeground: "app foreground"
        case .widgetIntent: "widget intent"
        case .significantTimeChange: "significant time change"
        case .localeChange: "locale change"
        }
    }
}
