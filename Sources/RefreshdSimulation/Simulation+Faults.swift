import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// Faults and the device in a simulation: the external events (fault boundaries, charging
/// windows, network spans, device reloads) in time order, and what each does to the host, the
/// store and the runtime.
extension Simulation {
    struct ExternalEvent {
        var time: Instant
        var order: Int
        var action: Action
        enum Action {
            case downStart(Duration), downEnd
            case kill(restartAfter: Duration), restart
            case clockStep(Duration)
            case suspend(Duration, noticed: Bool)
            case storeFull(Bool)
            case device
            case reload(ReloadReason)
            case budgetEmpty(Bool)
            case lowPower
            case pause(String), resume(String)
            case order(OperatorOrder)
        }
    }

    func externalEvents() -> [ExternalEvent] {
        var events: [ExternalEvent] = []
        var order = 0
        func add(_ t: Instant, _ a: ExternalEvent.Action) {
            guard t >= scenario.start, t < end else { return }
            events.append(ExternalEvent(time: t, order: order, action: a))
            order += 1
        }
        addFaultEvents(add)
        addWidgetEvents(add)
        addDeviceEvents(add)
        return events.sorted { $0.time != $1.time ? $0.time < $1.time : $0.order < $1.order }
    }

    /// Each fault's events at its instants (a span's start and end), and its line in the fault log.
    func addFaultEvents(_ add: (Instant, ExternalEvent.Action) -> Void) {
        let start = scenario.start
        for fault in scenario.faults {
            switch fault {
            case let .down(span):
                let t = span.start.instant(start: start)
                add(t, .downStart(span.duration))
                add(t + span.duration, .downEnd)
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration, detail: "refreshd down"))
            case let .kill(at, restartAfter):
                let t = at.instant(start: start)
                add(t, .kill(restartAfter: restartAfter))
                add(t + restartAfter, .restart)
                faultLog.append(.init(kind: fault.label, at: t, until: t + restartAfter, detail: "kill -9, restarted after \(formatDuration(restartAfter))"))
            case let .clockStep(at, by):
                let t = at.instant(start: start)
                add(t, .clockStep(by))
                faultLog.append(.init(kind: fault.label, at: t, until: nil, detail: "wall clock stepped by \(formatDuration(by))"))
            case let .suspend(span, atWakeUp):
                let t = span.start.instant(start: start)
                add(t, .suspend(span.duration, noticed: !atWakeUp))
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration,
                                      detail: atWakeUp ? "machine asleep, no notice at resume: seen at the next wake-up" : "machine asleep"))
            case let .storeFull(span):
                let t = span.start.instant(start: start)
                add(t, .storeFull(true))
                add(t + span.duration, .storeFull(false))
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration, detail: "every commit fails (disk full)"))
            case let .powerLoss(span), let .networkLoss(span):
                let t = span.start.instant(start: start)
                add(t, .device)
                add(t + span.duration, .device)
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration,
                                      detail: fault.label == "power-loss" ? "no mains power" : "no network"))
            case let .expireRun(job, run):
                faultLog.append(.init(kind: fault.label, at: nil, until: nil, detail: "\(job) run \(run) overruns its allowance"))
            case let .crashRun(job, run):
                faultLog.append(.init(kind: fault.label, at: nil, until: nil, detail: "\(job) run \(run) crashes"))
            case let .budgetEmpty(span):
                let t = span.start.instant(start: start)
                add(t, .budgetEmpty(true))
                add(t + span.duration, .budgetEmpty(false))
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration, detail: fault.detail(start: start)))
            case let .providerGarbage(_, _, span?), let .notifierDown(span):
                let t = span.start.instant(start: start)
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration, detail: fault.detail(start: start)))
            case let .lowPower(span):
                let t = span.start.instant(start: start)
                add(t, .lowPower)
                add(t + span.duration, .lowPower)
                faultLog.append(.init(kind: fault.label, at: t, until: t + span.duration, detail: fault.detail(start: start)))
            case let .widgetIntents(at, count):
                let t = at.instant(start: start)
                for k in 0..<max(0, count) { add(t + .seconds(Int64(k)), .reload(.widgetIntent)) }
                faultLog.append(.init(kind: fault.label, at: t, until: nil, detail: fault.detail(start: start)))
            case let .pause(job, at, length):
                let t = at.instant(start: start)
                add(t, .pause(job))
                if let length { add(t + length, .resume(job)) }
                faultLog.append(.init(kind: fault.label, at: t, until: length.map { t + $0 }, detail: fault.detail(start: start)))
            case let .order(order, at):
                let t = at.instant(start: start)
                add(t, .order(order))
                faultLog.append(.init(kind: fault.label, at: t, until: nil, detail: fault.detail(start: start)))
            case .providerGarbage, .providerExpires, .activitySilent:
                faultLog.append(.init(kind: fault.label, at: nil, until: nil, detail: fault.detail(start: start)))
            }
        }
    }

    /// The device's boundaries: its charging window each day, its network-down spans.
    func addDeviceEvents(_ add: (Instant, ExternalEvent.Action) -> Void) {
        let start = scenario.start
        if let window = scenario.device.charging {
            var day = startOfDay(containing: start)
            while day < end {
                add(localMinute(window.start, day: day), .device)
                add(localMinute(window.end, day: day), .device)
                day = nextDay(after: day)
            }
        }
        for span in scenario.device.networkDown {
            let t = span.start.instant(start: start)
            add(t, .device)
            add(t + span.duration, .device)
        }
    }

    /// What a world event asks of a running runtime on `host` at `t`: the device's or an
    /// intent's reload of every timeline, an operator's pause or resume, the device's power and
    /// network, Low Power Mode, an emptied widget budget. One machine's and each shard leader's
    /// on nodes (`ClusterSimulation.applyWorld`): the same world reaches either.
    func carry(_ action: ExternalEvent.Action, to runtime: RefreshRuntime, on host: SimulatedHost, at t: Instant) {
        switch action {
        case let .reload(reason): runtime.reloadAllTimelines(reason: reason)
        case let .pause(job): try? runtime.pause(job)
        case let .resume(job): try? runtime.resume(job)
        case let .order(order):
            // Through the entries the control socket uses, which record the order again.
            switch order {
            case let .submit(job, earliest): try? runtime.submitForOperator(job, earliest: earliest)
            case let .cancel(job): runtime.cancel(job)
            case let .cancelAll(namespace): runtime.cancelAll(namespace: namespace)
            case let .launchNow(job): try? runtime.launchNow(job)
            case let .expireNow(job): try? runtime.expireNow(job)
            case let .reloadWidgets(kind?, reason): runtime.reloadTimelines(ofKind: kind, reason: reason)
            case let .reloadWidgets(nil, reason): runtime.reloadAllTimelines(reason: reason)
            case let .activity(.request(request)): try? runtime.requestActivity(request)
            case let .activity(.update(update)): try? runtime.updateActivity(update)
            case let .activity(.end(id, content, policy, _)): try? runtime.endActivity(id, content: content, policy: policy)
            case .activity: break  // the machine's own events are never orders
            case let .addInstances(template, keys, values):
                _ = runtime.addInstances(keys.map { InstanceRecord(template: template, key: $0, values: values) })
            case let .removeInstance(template, key): try? runtime.removeInstance(template: template, key: key)
            }
        case .device:
            let conditions = conditions(at: t)
            if conditions != host.conditions { host.setConditions(conditions, noticed: scenario.device.conditionNotices) }
        case .lowPower: runtime.setLowPowerMode(isLowPower(at: t))
        case let .budgetEmpty(on): runtime.setWidgetBudgets(on ? .limited(0) : nil, original: budgets)
        default: break
        }
    }

    /// Whether the world event is one `carry` passes to a runtime (not one of refreshd's own
    /// faults: down, kill, a clock step, a suspend, a full disk).
    static func isCarried(_ action: ExternalEvent.Action) -> Bool {
        switch action {
        case .reload, .pause, .resume, .order, .device, .lowPower, .budgetEmpty: true
        default: false
        }
    }

    func apply(_ event: ExternalEvent) {
        switch event.action {
        case .downStart:
            guard let runtime = host.runtime, !host.stopped else { return }
            runtime.stop()
            // A graceful stop: running work gets its expiration and grace, in virtual time.
            host.advance(until: { host.stopped }, limit: .seconds(86_400))
            host.crash()
            downSince = host.clock
        case .downEnd, .restart:
            if host.runtime == nil { startRuntime() }
        case .kill:
            guard host.runtime != nil else { return }
            pendingAtCrash = Dictionary(((try? store.pendingRequests()) ?? []).map { ($0.identifier, $0.earliest) },
                                        uniquingKeysWith: { a, _ in a })
            lastRunIDAtCrash = ((try? store.recentRuns(limit: 1)) ?? []).first?.runID ?? 0
            crashTime = host.clock
            host.crash()
            downSince = host.clock
        case let .clockStep(delta):
            host.stepClock(by: delta)
        case let .suspend(span, noticed):
            host.suspend(for: span, noticed: noticed)
        case let .storeFull(on):
            storeFull = on
            if !on, host.stopped || host.runtime?.failure != nil {
                host.crash()
                startRuntime()
            }
        case .device:
            applyDevice(force: false)
        case .reload, .pause, .resume, .order, .lowPower, .budgetEmpty:
            if case let .budgetEmpty(on) = event.action { budgetEmpty = on }
            // An operator's command: lost, like one sent to the socket, while refreshd is down.
            guard let runtime = host.runtime, !host.stopped else { return }
            carry(event.action, to: runtime, on: host, at: host.clock)
        }
    }

    /// Sets power and network from the device model and the power/network faults at this instant.
    func applyDevice(force: Bool) {
        let conditions = conditions(at: host.clock)
        if force || conditions != host.conditions { host.setConditions(conditions, noticed: scenario.device.conditionNotices) }
    }

    /// Power and network at `now`: the device model's charging window and network-down spans,
    /// and the power/network faults.
    func conditions(at now: Instant) -> Conditions {
        var power = true
        if let window = scenario.device.charging {
            power = window.contains(minuteOfDay(now))
        }
        var network = true
        for span in scenario.device.networkDown where contains(span, now) { network = false }
        for fault in scenario.faults {
            switch fault {
            case let .powerLoss(span) where contains(span, now): power = false
            case let .networkLoss(span) where contains(span, now): network = false
            default: break
            }
        }
        return Conditions(externalPower: power, network: network)
    }

    /// Whether the widget budgets are emptied at `t` (a `budget-empty` fault's span).
    func isBudgetEmpty(at t: Instant) -> Bool {
        scenario.faults.contains { if case let .budgetEmpty(span) = $0 { contains(span, t) } else { false } }
    }

    /// Whether the device is in Low Power Mode at `t` (the device's spans and the faults').
    func isLowPower(at t: Instant) -> Bool {
        scenario.device.lowPower.contains { contains($0, t) }
            || scenario.faults.contains { if case let .lowPower(span) = $0 { contains(span, t) } else { false } }
    }

    func contains(_ span: TimeSpan, _ t: Instant) -> Bool {
        let s = span.start.instant(start: scenario.start)
        return t >= s && t < s + span.duration
    }
}
