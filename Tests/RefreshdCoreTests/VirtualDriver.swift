@testable import RefreshdCore

/// Drives a `SchedulerCore` on virtual time, the way the shells do: it keeps the armed wake-up,
/// advances the clock to it, and records every effect. Nothing sleeps.
struct VirtualDriver {
    var core: SchedulerCore
    var now: Instant
    var log: [SchedulerEffect] = []
    var armed: Instant?
    var launched: [LaunchOrder] = []
    var expired: [Int64] = []
    var killed: [Int64] = []
    var stored: [StateChange] = []
    var watching = false
    var stopped = false

    init(_ definitions: [TaskDefinition], configuration: SchedulerConfiguration = .init(),
         start: Instant = Instant(milliseconds: 1_800_000_000_000)) {
        core = SchedulerCore(configuration: configuration, definitions: definitions)
        now = start
    }

    mutating func record(_ effects: [SchedulerEffect]) {
        log += effects
        for e in effects {
            switch e {
            case let .armTimer(at): armed = at
            case .disarmTimer: armed = nil
            case let .launch(order): launched.append(order)
            case let .expire(id): expired.append(id)
            case let .kill(id): killed.append(id)
            case let .persist(change): stored.append(change)
            case let .watchConditions(on): watching = on
            case .stopped: stopped = true
            case .log, .publish, .ended, .readConditions, .notify, .killGroup, .closeResults, .processEnded: break
            }
        }
    }

    mutating func submit(_ id: String, in offset: Duration? = nil, kind: TaskKind = .appRefresh) throws(SchedulerError) {
        let effects = try core.submit(TaskRequest(identifier: id, kind: kind,
                                                  earliestBeginDate: offset.map { now + $0 }), at: now)
        record(effects)
    }

    mutating func send(_ event: SchedulerEvent) { record(core.handle(event, at: now)) }

    /// Advances virtual time by `span`, firing the armed timer each time it comes due.
    mutating func advance(by span: Duration) {
        let end = now + span
        while let t = armed, t <= end {
            now = max(now, t)
            armed = nil
            send(.timerFired)
        }
        now = end
    }

    /// Advances until the next armed wake-up and fires it.
    mutating func fireNext() {
        guard let t = armed else { return }
        now = max(now, t)
        armed = nil
        send(.timerFired)
    }

    mutating func finish(_ runID: Int64, _ exit: RunExit) { send(.runFinished(runID: runID, exit: exit)) }

    var outcomes: [Outcome] {
        stored.compactMap { if case let .runEnded(_, _, _, outcome, _, _, _, _, _) = $0 { outcome } else { nil } }
    }

    var logEvents: [LogMessage] { log.compactMap { if case let .log(e) = $0 { e } else { nil } } }
}

extension Duration {
    static func minutes(_ m: Int64) -> Duration { .seconds(m * 60) }
    static func hours(_ h: Int64) -> Duration { .seconds(h * 3600) }
}
