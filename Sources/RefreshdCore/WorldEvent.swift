import Foundation

/// What the world did to refreshd, recorded for `simulate --replay` (issue 34): a start, the
/// start of a stop, a wall-clock step, a change of conditions, an operator's pause, resume or
/// other order (`OperatorOrder`), a reload of the job files; and each live activity's state
/// changes, which the replay's comparison counts (the activity records go at the dismissal).
///
/// The core records each as a machine record in the `world` table when it handles the event
/// (so every store folds it as it folds any record: no schema migration), keyed by the instant
/// so that the keys sort in time order, and the stores forget them with the run history
/// (`pruneRuns` drops the world records older than its cutoff). A start that no stop precedes
/// was a kill -9 (or a crash): the replay places the kill at the last instant the store knew of.
///
/// ```swift
/// WorldEvent(at: now, what: .clockStep(expected: expected)).record
/// // MachineRecord(table: "world", key: "0001764900000000 clock-step", value: "{...}")
/// ```
package struct WorldEvent: Sendable, Hashable {
    package enum What: Sendable, Hashable {
        case started
        case stopping
        /// The wall clock read `at` where `expected` was due (`at - expected` is the step).
        case clockStep(expected: Instant)
        case conditions(Conditions)
        case pause(String)
        case resume(String)
        /// An order from outside the job files, taken (`OperatorOrder`).
        case order(OperatorOrder)
        /// The job files were reloaded: the identifiers added, changed or removed. The files
        /// themselves are not kept (the replay says what it cannot reproduce).
        case reload(changed: [String])
        /// A live activity reached a state (`ActivityTransition`), with the updates applied to
        /// it so far.
        case activity(id: String, to: ActivityState, cause: ActivityCause, updates: Int)
    }

    package var at: Instant
    package var what: What

    package init(at: Instant, what: What) {
        self.at = at
        self.what = what
    }

    /// The records' table.
    package static let table = "world"

    /// The key of the first record at or after `instant`: keys are the instant's milliseconds
    /// in 16 digits (then the event), so they sort in time order and a prune is a key range.
    package static func key(from instant: Instant) -> String {
        let digits = String(max(0, instant.milliseconds))
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    var name: String {
        switch what {
        case .started: "started"
        case .stopping: "stopping"
        case .clockStep: "clock-step"
        case .conditions: "conditions"
        case .pause: "pause"
        case .resume: "resume"
        case let .order(order): order.name
        case .reload: "reload"
        case .activity: "activity"
        }
    }

    /// The record the stores keep. Two events at one instant have distinct keys unless they
    /// are of one kind (and job): then the later one stands, as the world then was.
    package var record: MachineRecord {
        var key = Self.key(from: at) + " " + name
        var value = "{\"at\":\(at.milliseconds),\"event\":\"\(name)\""
        switch what {
        case .started, .stopping: break
        case let .clockStep(expected): value += ",\"expected\":\(expected.milliseconds)"
        case let .conditions(c): value += ",\"power\":\(c.externalPower),\"network\":\(c.network)"
        case let .pause(job), let .resume(job):
            key += " " + job
            value += ",\"job\":" + Self.quoted(job)
        case let .order(order):
            if let subject = order.subject { key += " " + subject }
            switch order {
            case let .submit(job, earliest):
                value += ",\"job\":" + Self.quoted(job) + (earliest.map { ",\"earliest\":\($0.milliseconds)" } ?? "")
            case let .cancel(job), let .launchNow(job), let .expireNow(job): value += ",\"job\":" + Self.quoted(job)
            case let .cancelAll(namespace): if let namespace { value += ",\"namespace\":" + Self.quoted(namespace) }
            case let .reloadWidgets(kind, reason):
                if let kind { value += ",\"kind\":" + Self.quoted(kind) }
                value += ",\"reason\":" + Self.quoted(reason.rawValue)
            case let .activity(event):
                value += ",\"detail\":" + Self.quoted(RecordedActivity(event).map(Self.json) ?? "{}")
            case let .addInstances(template, keys, values):
                value += ",\"template\":" + Self.quoted(template) + ",\"keys\":"
                    + (StrictJSON.compact(.array(keys.map { .string($0) })) ?? "[]") + ",\"values\":" + Self.quoted(Self.json(values))
            case let .removeInstance(template, key):
                value += ",\"template\":" + Self.quoted(template) + ",\"key\":" + Self.quoted(key)
            }
        case let .reload(changed):
            value += ",\"changed\":" + (StrictJSON.compact(.array(changed.map { .string($0) })) ?? "[]")
        case let .activity(id, state, cause, updates):
            key += " " + id + " " + state.rawValue
            value += ",\"id\":\(Self.quoted(id)),\"to\":\"\(state.rawValue)\",\"cause\":\"\(cause.rawValue)\",\"updates\":\(updates)"
        }
        return MachineRecord(table: Self.table, key: key, value: value + "}")
    }

    private static func quoted(_ text: String) -> String { StrictJSON.compact(.string(text)) ?? "\"\"" }

    /// A value's JSON text, keys sorted (kept as a string member: its keys are anyone's).
    private static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private static func decoded<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        text.flatMap { try? JSONDecoder().decode(type, from: Data($0.utf8)) }
    }

    /// An activity order's event as the record keeps it: a start, an update or an end.
    private struct RecordedActivity: Codable {
        var request: ActivityRequest?
        var update: ActivityUpdate?
        var end: End?

        struct End: Codable {
            var id: String
            var content: String?
            var policy: DismissalPolicy
            var timestamp: Instant
        }

        init?(_ event: ActivityEvent) {
            switch event {
            case let .request(request): self.request = request
            case let .update(update): self.update = update
            case let .end(id, content, policy, timestamp): end = End(id: id, content: content, policy: policy, timestamp: timestamp)
            default: return nil
            }
        }

        var event: ActivityEvent? {
            if let request { return .request(request) }
            if let update { return .update(update) }
            if let end { return .end(id: end.id, content: end.content, policy: end.policy, timestamp: end.timestamp) }
            return nil
        }
    }

    /// A record read back (nil: not one this version wrote).
    package init?(_ record: MachineRecord) {
        guard record.table == Self.table, let members = StrictJSON.object(record.value) else { return nil }
        func integer(_ name: String) -> Int64? {
            if case let .integer(v)? = members.first(where: { $0.key == name })?.value { v } else { nil }
        }
        func text(_ name: String) -> String? {
            if case let .string(v)? = members.first(where: { $0.key == name })?.value { v } else { nil }
        }
        func texts(_ name: String) -> [String]? {
            guard case let .array(items)? = members.first(where: { $0.key == name })?.value else { return nil }
            return items.compactMap { if case let .string(v) = $0 { v } else { nil } }
        }
        func flag(_ name: String) -> Bool? {
            if case let .bool(v)? = members.first(where: { $0.key == name })?.value { v } else { nil }
        }
        guard let at = integer("at"), let event = text("event") else { return nil }
        self.at = Instant(milliseconds: at)
        switch event {
        case "started": what = .started
        case "stopping": what = .stopping
        case "clock-step":
            guard let expected = integer("expected") else { return nil }
            what = .clockStep(expected: Instant(milliseconds: expected))
        case "conditions":
            guard let power = flag("power"), let network = flag("network") else { return nil }
            what = .conditions(Conditions(externalPower: power, network: network))
        case "pause", "resume":
            guard let job = text("job") else { return nil }
            what = event == "pause" ? .pause(job) : .resume(job)
        case "submit":
            guard let job = text("job") else { return nil }
            what = .order(.submit(job, earliest: integer("earliest").map(Instant.init(milliseconds:))))
        case "cancel", "simulate-launch", "simulate-expiration":
            guard let job = text("job") else { return nil }
            what = .order(event == "cancel" ? .cancel(job) : event == "simulate-launch" ? .launchNow(job) : .expireNow(job))
        case "cancel-all":
            what = .order(.cancelAll(namespace: text("namespace")))
        case "widget-reload":
            guard let reason = text("reason").flatMap(ReloadReason.init(rawValue:)) else { return nil }
            what = .order(.reloadWidgets(kind: text("kind"), reason: reason))
        case "ctl-activity":
            guard let event = Self.decoded(RecordedActivity.self, text("detail"))?.event else { return nil }
            what = .order(.activity(event))
        case "instance-add":
            guard let template = text("template"), let keys = texts("keys"),
                  let values = Self.decoded([String: String].self, text("values")) else { return nil }
            what = .order(.addInstances(template: template, keys: keys, values: values))
        case "instance-remove":
            guard let template = text("template"), let key = text("key") else { return nil }
            what = .order(.removeInstance(template: template, key: key))
        case "reload":
            guard let changed = texts("changed") else { return nil }
            what = .reload(changed: changed)
        case "activity":
            guard let id = text("id"), let state = text("to").flatMap(ActivityState.init(rawValue:)),
                  let cause = text("cause").flatMap(ActivityCause.init(rawValue:)), let updates = integer("updates") else { return nil }
            what = .activity(id: id, to: state, cause: cause, updates: Int(updates))
        default: return nil
        }
    }
}
