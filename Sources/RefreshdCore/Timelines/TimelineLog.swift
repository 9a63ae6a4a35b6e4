/// One log line of the timeline machine, as data; text only when someone reads `description`.
package enum TimelineLog: Sendable, Hashable, CustomStringConvertible {
    /// Where a coalesced request went.
    package enum Coalesced: Sendable, Hashable {
        /// Into the reload that follows the provider call in flight.
        case afterProviderRun
        /// Into the reload deferred for the budget (released at the instant, nil: no slot until
        /// the budget changes).
        case deferred(until: Instant?)
    }

    /// An entry is shown now (at its date, on a new timeline, or at restore).
    case published(WidgetID, entryDate: Instant)
    /// The family left the screen.
    case withdrawn(WidgetID)
    /// The provider was asked. `used`/`limit` after counting it (nil: exempt or unlimited).
    case providerAsked(WidgetID, ReloadReason, exempt: Bool, used: Int?, limit: Int?, window: Duration)
    /// A reload over budget waits for the window to free a slot.
    case deferred(WidgetID, ReloadReason, used: Int, limit: Int, window: Duration, release: Instant?)
    case coalesced(WidgetID, ReloadReason, into: Coalesced)
    /// A counted reload is held until Low Power Mode ends.
    case heldLowPower(WidgetID, ReloadReason)
    /// A counted reload within the budget waits for the minimum interval since the last one.
    case spaced(WidgetID, ReloadReason, last: Instant, interval: Duration, release: Instant)
    /// A provider returned a good timeline.
    case accepted(WidgetID, entries: Int, policy: TimelinePolicy, nextReload: Instant?)
    /// A failed reload; the last good timeline stays.
    case failed(WidgetID, reason: String, expired: Bool, keptEntries: Int)
    /// The provider has nothing to show yet (not a failure, nothing stale).
    case waiting(WidgetID, reason: String)
    /// A provider call was in flight when refreshd stopped.
    case interrupted(WidgetID, since: Instant)
    case staleStarted(WidgetID, since: Instant, StaleReason)
    case staleEnded(WidgetID, since: Instant, lasted: Duration)
    case unknownKind(String, ReloadReason)
    /// A provider result for a widget with no call in flight (undeclared meanwhile, or a duplicate).
    case ignoredResult(WidgetID)
    /// A saved record for a widget no longer declared was deleted at restore.
    case droppedRecord(WidgetID)

    package var description: String {
        switch self {
        case let .published(id, date):
            "published \(id): entry of \(date)"
        case let .withdrawn(id):
            "withdrawn \(id): no longer on screen"
        case let .providerAsked(id, reason, exempt, used, limit, window):
            if exempt {
                "reload \(id) (\(reason)): provider asked, exempt from the budget"
            } else if let used, let limit {
                "reload \(id) (\(reason)): provider asked, budget \(used)/\(limit) used in \(Self.windowText(window))"
            } else {
                "reload \(id) (\(reason)): provider asked, budget unlimited"
            }
        case let .deferred(id, reason, used, limit, window, release):
            "reload deferred \(id) (\(reason)): budget \(used)/\(limit) used in \(Self.windowText(window)), "
                + (release.map { "next slot \($0)" } ?? "no slot until the budget changes")
        case let .heldLowPower(id, reason):
            "reload held \(id) (\(reason)): Low Power Mode is on; released when it ends"
        case let .spaced(id, reason, last, interval, release):
            "reload spaced \(id) (\(reason)): last reload \(last), at most one every \(Self.windowText(interval)); at \(release)"
        case let .coalesced(id, reason, into):
            switch into {
            case .afterProviderRun:
                "reload coalesced \(id) (\(reason)): one reload after the provider call in flight"
            case let .deferred(until):
                "reload coalesced \(id) (\(reason)): into the deferred reload, "
                    + (until.map { "next slot \($0)" } ?? "no slot until the budget changes")
            }
        case let .accepted(id, entries, policy, next):
            "timeline \(id): \(entries) entr\(entries == 1 ? "y" : "ies"), policy \(policy), next reload "
                + (next.map(\.iso8601) ?? "only on request")
        case let .failed(id, reason, expired, kept):
            "reload failed \(id): \(expired ? "provider expired" : reason); keeping the last good timeline (\(kept) entr\(kept == 1 ? "y" : "ies"))"
        case let .waiting(id, reason):
            "waiting \(id): \(reason) (not a failure, not stale)"
        case let .interrupted(id, since):
            "reload failed \(id): provider call since \(since) interrupted by refreshd stopping"
        case let .staleStarted(id, since, reason):
            "stale \(id) since \(since): \(reason)"
        case let .staleEnded(id, since, lasted):
            "fresh \(id): stale since \(since), for \(formatDuration(lasted))"
        case let .unknownKind(kind, reason):
            "reload of unknown widget kind \(kind) (\(reason)) ignored"
        case let .ignoredResult(id):
            "provider result for \(id) ignored: no provider call in flight"
        case let .droppedRecord(id):
            "dropped saved state of \(id): no longer declared"
        }
    }

    /// `24 h`, `90 min`, `45s`.
    static func windowText(_ window: Duration) -> String {
        let ms = window.wholeMilliseconds
        if ms > 0, ms % 3_600_000 == 0 { return "\(ms / 3_600_000) h" }
        if ms > 0, ms % 60_000 == 0 { return "\(ms / 60_000) min" }
        return formatDuration(window)
    }
}
