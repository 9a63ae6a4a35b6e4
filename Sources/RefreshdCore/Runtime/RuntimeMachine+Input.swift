/// The machine's one entry (issue 37): an input and the instant in, its effects appended and
/// its reply out. Each case is one of the steps below it (`submit`, `finishRun`,
/// `leaderExited`...), which `RuntimeMachineTests` also test one by one.
extension RuntimeMachine {
    /// Handles one input at `now`, appending its effects (state changes first, as each step
    /// orders them). A refused input appends nothing and changes nothing.
    package mutating func handle(_ input: RuntimeInput, at now: Instant,
                                 into effects: inout [SchedulerEffect]) -> RuntimeReply {
        let start = effects.count
        let reply = handleInput(input, at: now, into: &effects)
        if !inProcessRuns.isEmpty { endKilledInProcessRuns(from: start, at: now, into: &effects) }
        return reply
    }

    /// A kill of a run in refreshd's own process (a handler, an action) ends it at once, as
    /// abandoned: the host abandons the task or kills its worker, and no exit will come. Its
    /// end follows the input's other effects, as a command's exit would come after them.
    private mutating func endKilledInProcessRuns(from start: Int, at now: Instant, into effects: inout [SchedulerEffect]) {
        var index = start
        while index < effects.count {
            if case let .kill(runID) = effects[index], inProcessRuns.remove(runID) != nil {
                handle(.runFinished(runID: runID, exit: .abandoned), at: now, into: &effects)
            }
            index += 1
        }
    }

    private mutating func handleInput(_ input: RuntimeInput, at now: Instant,
                                      into effects: inout [SchedulerEffect]) -> RuntimeReply {
        switch input {
        case let .event(event):
            handle(event, at: now, into: &effects)
        case let .timeline(event):
            machines.handle(timeline: event, at: now, into: &effects)
        case let .activity(event):
            if let error = machines.handle(activity: event, at: now, into: &effects) { return .refused(.activity(error)) }
            // A start, update or end from outside a run: an order the replay gives back.
            if event.activityID != nil { effects += machines.worldRecord(.order(.activity(event)), at: now) }
        case let .submit(request):
            do throws(SchedulerError) { try submit(request, at: now, into: &effects) } catch { return .refused(.scheduler(error)) }
        case let .submitFirst(identifier):
            do throws(SchedulerError) {
                try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(SchedulerError) in
                    try core.submitFirst(identifier, at: now, into: &effects)
                }
            } catch {
                return .refused(.scheduler(error))
            }
        case let .operatorSubmit(identifier, earliest):
            do throws(ControlRefusal) {
                let request = try operatorRequest(identifier, earliest: earliest)
                do throws(SchedulerError) {
                    try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(SchedulerError) in
                        try core.submit(ordered: request, at: now, into: &effects)
                    }
                } catch {
                    return .refused(.scheduler(error))
                }
            } catch {
                return .refused(.order(error))
            }
        case let .reloaded(changed):
            effects += machines.worldRecord(.reload(changed: changed), at: now)
        case let .order(command):
            do throws(ControlRefusal) { try handle(operator: command, at: now, into: &effects) } catch { return .refused(.order(error)) }
        case let .seed(job, replacing):
            do throws(SchedulerError) {
                return .seeded(try seed(job, replacing: replacing, at: now, into: &effects))
            } catch {
                return .refused(.scheduler(error))
            }
        case let .addInstance(record):
            do throws(InstanceError) {
                // Through the composition: an instance of a timeline template declares its widget.
                try machines.addInstance(record, at: now, into: &effects)
            } catch {
                return .refused(.instance(error))
            }
            effects += instancesAdded([record], at: now)
        case let .addInstances(records):
            let refused = addInstances(records, at: now, into: &effects)
            let kept = Set(refused.map(\.record.identifier))
            effects += instancesAdded(records.filter { !kept.contains($0.identifier) }, at: now)
            if !refused.isEmpty { return .instancesRefused(refused) }
        case let .removeInstance(template, key):
            do throws(InstanceError) {
                try machines.scheduler.checkRemoval(template: template, key: key)
            } catch {
                return .refused(.instance(error))
            }
            handle(SchedulerEvent.removeInstance(template: template, key: key), at: now, into: &effects)
            effects += machines.worldRecord(.order(.removeInstance(template: template, key: key)), at: now)
        case let .setInstances(template, records):
            machines.setInstances(template, records, at: now, into: &effects)
        case let .instanceLines(lines):
            machines.applyInstanceLines(lines, at: now, into: &effects)
        case .stop:
            if stopRequested() { handle(.shutdown, at: now, into: &effects) }
        case let .stopSignal(name):
            switch stopSignal(name) {
            case let .stopImmediately(reason):
                stopImmediately(reason, at: now, into: &effects)
            case let .stopGracefully(log):
                effects.append(.log(log))
                if stopRequested() { handle(.shutdown, at: now, into: &effects) }
            }
        case let .stopImmediately(reason):
            stopImmediately(reason, at: now, into: &effects)
        case let .wakeUp(clocks):
            wakeUp(clocks, into: &effects)
        case let .clockSet(clocks):
            if let changed = clocksRead(clocks, .clockSet) { handle(changed, at: now, into: &effects) }
        case let .launching(order, target, storeFailed):
            if storeFailed {
                launchAbandoned(order, at: now, into: &effects)
                return .starts(false)
            }
            return .starts(launching(order, target, at: now, into: &effects))
        case let .processStarted(order, group, ticks):
            processStarted(order, processGroup: group, startTicks: ticks, into: &effects)
        case let .startFailed(runID, reason):
            startFailed(runID, reason: reason, at: now, into: &effects)
        case let .sweepStarted(runID):
            sweepStarted(runID)
        case let .workEnded(order, runID, exit, results, usage, swept):
            if let swept, let order,
               let log = Self.leftoversKilled(identifier: order.identifier, runID: runID, count: swept, atStart: false) {
                effects.append(.log(log))
            }
            finishRun(runID, exit: exit, results: results, usage: usage, at: now, into: &effects)
            // A stop that waited for this sweep comes now (the run ended as it exited first).
            if swept != nil, sweepEnded(runID) { handle(.shutdown, at: now, into: &effects) }
        case let .resultsClosed(runID):
            resultsClosed(runID, at: now, into: &effects)
        case let .leaderExited(runID, exit, closed):
            leaderExited(runID, exit: exit, resultsClosed: closed, at: now, into: &effects)
        case let .notification(id, outcome):
            machines.handle(notification: id, outcome, at: now, into: &effects)
        case .liveLines:
            _ = applyLiveBacklog(into: &effects)
        case let .outputWindow(order):
            let (full, dropped) = outputWindowIsFull(order, at: now)
            return .outputWindow(full: full, dropped: dropped)
        case let .output(order, lines):
            return .output(outputLines(order, lines, at: now))
        case let .outputSkipped(order, bytes, lineEnds):
            outputSkipped(order, bytes: bytes, lineEnds: lineEnds)
        case let .resultsRead(order, chunk):
            return .liveLine(taken: false, first: resultsRead(order, chunk, at: now))
        case let .resultLine(order, line):
            let taken = resultLine(order, line, at: now)
            return .liveLine(taken: taken.taken, first: taken.first)
        case let .workStopped(runID):
            inProcessRuns.remove(runID)
            return .dropped(runWorkEnded(runID))
        }
        return .done
    }

    /// The orders of instances added from outside the job files (`ctl instance add`, an
    /// embedding app): one record for each template and set of values, with its keys, so that a
    /// batch of a million is a few records, not a million.
    func instancesAdded(_ records: [InstanceRecord], at now: Instant) -> [SchedulerEffect] {
        var batches: [String: (template: String, values: [String: String], keys: [String])] = [:]
        var order: [String] = []
        for record in records {
            let group = record.template + " " + record.valuesText
            if batches[group] == nil { order.append(group); batches[group] = (record.template, record.values, []) }
            batches[group]!.keys.append(record.key)
        }
        return order.flatMap { group in
            let batch = batches[group]!
            return machines.worldRecord(.order(.addInstances(template: batch.template, keys: batch.keys, values: batch.values)), at: now)
        }
    }

    /// Adds many instances in one event, each checked and added as `addInstance` does; the
    /// refused ones come back with why (nothing of them changed). A batch of more than a person
    /// reads is logged in one line a template (`InstanceLog.foldBatch`).
    mutating func addInstances(_ records: [InstanceRecord], at now: Instant,
                               into effects: inout [SchedulerEffect]) -> [(record: InstanceRecord, error: InstanceError)] {
        let start = effects.count
        var refused: [(record: InstanceRecord, error: InstanceError)] = []
        // Room for them all first: no doubling copy or rehash of the tables half-way.
        machines.withScheduler(at: now, into: &effects) { core, _ in core.reserveInstances(records.count) }
        for record in records {
            do throws(InstanceError) {
                if machines.widgetTemplates.isEmpty, machines.stagingTemplates.isEmpty {
                    try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(InstanceError) in
                        try core.addInstance(record, at: now, into: &effects)
                    }
                } else {
                    try machines.addInstance(record, at: now, into: &effects)
                }
            } catch {
                refused.append((record, error))
            }
        }
        InstanceLog.foldBatch(&effects, from: start)
        return refused
    }
}
