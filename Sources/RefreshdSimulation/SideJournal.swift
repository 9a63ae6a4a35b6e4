import Foundation
import RefreshdCore
import RefreshdRuntime

/// What the simulation saw of widgets and activities: every entry a modelled provider returned
/// (so a published entry can be checked against them), the upstream fetches shared across a
/// kind's families, each provider's run count, and every activity transition for the report.
///
/// Shared between the host's behaviour model (which runs on the simulation's thread) and the
/// runtime's observers, behind one lock.
final class SideJournal: @unchecked Sendable {
    /// An activity's state change as the report shows it.
    struct Transition: Sendable {
        var id: String
        var type: String
        var transition: ActivityTransition
    }

    private let lock = NSLock()
    /// `kind/family|date|content` of every entry a provider returned.
    private var returned: Set<String> = []
    private var lastFetch: [String: Instant] = [:]
    private var providerRuns: [String: Int] = [:]
    private var transitions: [Transition] = []
    private var marks: [String: [SimulationReport.WidgetMark]] = [:]
    /// Playlist widgets (`kind/family`): the staged day each returned entry date falls back to
    /// (nil: today's own playlist), from the provider's latest timeline.
    private var playlistEntries: [String: [Instant: String?]] = [:]

    /// Instances' widget kinds (issue 23) -> their template, noted at each provider call: the
    /// report folds their rows and lanes into one a template.
    private var instanceKinds: [String: String] = [:]

    func noteInstanceKind(_ kind: String, template: String) { lock.withLock { instanceKinds[kind] = template } }

    /// Each instance widget kind's template.
    var templatesOfKinds: [String: String] { lock.withLock { instanceKinds } }

    static func entryKey(widget: String, date: String, content: String) -> String { "\(widget)|\(date)|\(content)" }

    func noteReturned(_ keys: [String]) { lock.withLock { returned.formUnion(keys) } }

    func wasReturned(_ key: String) -> Bool { lock.withLock { returned.contains(key) } }

    /// A playlist provider returned these entries (dates, and the fallback day if any).
    func notePlaylist(widget: String, entries: [(Instant, String?)]) {
        lock.withLock { for (date, fallback) in entries { playlistEntries[widget, default: [:]][date] = fallback } }
    }

    /// The widgets whose timelines come from a playlist.
    var playlistWidgets: Set<String> { lock.withLock { Set(playlistEntries.keys) } }

    /// Whether a fetch of `kind` at `now` goes upstream, or is served by one made within
    /// `window` by another family (the per-kind cache refreshd manages for providers).
    func fetches(kind: String, at now: Instant, window: Duration) -> Bool {
        lock.withLock {
            if let last = lastFetch[kind], window > .zero, now < last + window { return false }
            lastFetch[kind] = now
            return true
        }
    }

    /// The job's next provider run number (1-based, over all its families).
    func nextProviderRun(_ job: String) -> Int {
        lock.withLock {
            providerRuns[job, default: 0] += 1
            return providerRuns[job]!
        }
    }

    func record(_ o: RuntimeObservation) {
        switch o.logMessage {
        case let .activity(.transition(t, a))?:
            lock.withLock { transitions.append(Transition(id: t.id, type: a.typeName, transition: t)) }
        case let .timeline(log)?:
            let mark: (WidgetID, SimulationReport.WidgetMark)? = switch log {
            case let .published(id, entryDate):
                // A playlist entry that falls back to an earlier staged day is marked as such.
                if let fallback = lock.withLock({ playlistEntries[id.description]?[entryDate] ?? nil }) {
                    (id, .init(kind: "shown-fallback", at: o.time, detail: "\(entryDate.iso8601) fallback \(fallback)"))
                } else {
                    (id, .init(kind: "shown", at: o.time, detail: entryDate.iso8601))
                }
            case let .providerAsked(id, reason, exempt, _, _, _):
                (id, .init(kind: exempt ? "reload-exempt" : "reload", at: o.time, detail: reason.description))
            case let .deferred(id, reason, _, _, _, release):
                (id, .init(kind: "deferred", at: o.time, detail: "\(reason)" + (release.map { " until \($0.iso8601)" } ?? "")))
            case let .heldLowPower(id, reason):
                (id, .init(kind: "deferred", at: o.time, detail: "\(reason) until Low Power Mode ends"))
            case let .spaced(id, reason, _, interval, release):
                (id, .init(kind: "spaced", at: o.time, detail: "\(reason) until \(release.iso8601) (min interval \(formatDuration(interval)))"))
            case let .failed(id, reason, _, _): (id, .init(kind: "failed", at: o.time, detail: reason))
            case let .staleStarted(id, since, reason): (id, .init(kind: "stale", at: since, detail: reason.description))
            case let .staleEnded(id, _, _): (id, .init(kind: "fresh", at: o.time, detail: ""))
            default: nil
            }
            if let (id, mark) = mark { lock.withLock { marks[id.description, default: []].append(mark) } }
        default:
            break
        }
    }

    /// Each widget's marks (`kind/family`), in the order seen.
    var widgetMarks: [String: [SimulationReport.WidgetMark]] { lock.withLock { marks } }

    var activityTransitions: [Transition] { lock.withLock { transitions } }
}
