import Testing
@testable import RefreshdCore

/// Drives an `ActivityMachine` on virtual time: sends events at chosen instants, fires the timer
/// at each deadline the machine names, keeps every effect, and checks the invariants and the
/// transitions' legality after every step.
struct ActivityDriver {
    var machine: ActivityMachine
    var now: Instant
    var effects: [ActivityEffect] = []

    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    init(settings: ActivitySettings = ActivitySettings(), now: Instant = ActivityDriver.t0) {
        machine = ActivityMachine(settings: settings)
        self.now = now
    }

    /// Sends `event` at the current instant (or `at`, which becomes the current instant).
    @discardableResult
    mutating func send(_ event: ActivityEvent, at instant: Instant? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) -> ActivityError? {
        if let instant { now = instant }
        let before = effects.count
        let error = machine.handle(event, at: now, into: &effects)
        check(from: before, sourceLocation: sourceLocation)
        return error
    }

    /// Fires the timer at every deadline up to `instant`, on time, then moves the clock there.
    mutating func advance(to instant: Instant, sourceLocation: SourceLocation = #_sourceLocation) {
        while let next = machine.nextDeadline, next <= instant {
            #expect(next >= now, "a deadline in the past was left armed", sourceLocation: sourceLocation)
            send(.timerFired, at: max(now, next), sourceLocation: sourceLocation)
        }
        now = instant
    }

    mutating func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) {
        advance(to: now + duration, sourceLocation: sourceLocation)
    }

    private func check(from start: Int, sourceLocation: SourceLocation) {
        #expect(machine.checkInvariants() == [], sourceLocation: sourceLocation)
        for case let .transition(t) in effects[start...] {
            if let from = t.from {
                #expect(from.canMove(to: t.to), "\(t.id): \(from) -> \(t.to) is not allowed", sourceLocation: sourceLocation)
            }
            #expect(t.due <= t.applied, "\(t.id): applied before due", sourceLocation: sourceLocation)
        }
    }

    var transitions: [ActivityTransition] {
        effects.compactMap { if case let .transition(t) = $0 { t } else { nil } }
    }

    func transitions(of id: String) -> [ActivityTransition] { transitions.filter { $0.id == id } }

    var logs: [ActivityLog] {
        effects.compactMap { if case let .log(l) = $0 { l } else { nil } }
    }

    var changes: [ActivityChange] {
        effects.compactMap { if case let .persist(c) = $0 { c } else { nil } }
    }

    func state(_ id: String) -> ActivityState? {
        machine.activities[id]?.state ?? (machine.recentlyDismissed.contains { $0.id == id } ? .dismissed : nil)
    }

    func activity(_ id: String) -> Activity? { machine.activities[id] }

    /// A request to start now, owned by `owner`, in namespace `ns`.
    static func request(_ id: String, owner: String? = "job.download", ns: String = "app",
                        content: String = #"{"progress":0}"#, staleDate: Instant? = nil,
                        frequent: Bool = false, startAt: Instant? = nil) -> ActivityEvent {
        .request(ActivityRequest(id: id, typeName: "WallpaperPack", owner: owner, namespace: ns,
                                 attributes: #"{"pack":"autumn"}"#, content: content, staleDate: staleDate,
                                 frequentUpdates: frequent, startAt: startAt))
    }

    static func update(_ id: String, progress: Double, at timestamp: Instant, staleDate: Instant? = nil,
                       priority: ActivityPriority = .low) -> ActivityEvent {
        .update(ActivityUpdate(id: id, content: #"{"progress":\#(progress)}"#, staleDate: staleDate,
                               timestamp: timestamp, priority: priority))
    }
}
