import Foundation

/// The side machines in the composition: a timeline event fed to the timeline machine (its
/// provider runs, publications and records), an activity event to the activity machine, and
/// both restored from their stored records at a start. Apart from `Machines.swift` (the events
/// and the settling of effects between the machines) so each file holds one idea.
extension Machines {
    // MARK: The timeline machine

    mutating func feed(_ event: TimelineEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        timelineEffects.removeAll(keepingCapacity: true)
        sideRevision &+= 1
        timelines.handle(event, at: now, into: &timelineEffects)
        var asks: [(WidgetID, ReloadReason)] = []
        for effect in timelineEffects {
            switch effect {
            case let .runProvider(widget, reason):
                asks.append((widget, reason))
            case let .publish(widget, entry):
                effects.append(.publish(Publication(path: "widgets/\(widget.kind)/\(widget.family.rawValue).json",
                                                    contents: entry.map { publication(widget, $0) })))
            case let .persist(change):
                guard stores else { continue }
                switch change {
                case let .putWidget(record): putRecord(change.table, change.key, record, into: &effects)
                case let .putCounters(counter): putRecord(change.table, change.key, counter, into: &effects)
                case .deleteWidget: effects.append(.persist(.deleteRecord(table: change.table, key: change.key)))
                }
            case let .log(log):
                effects.append(.log(.timeline(log)))
            }
        }
        for (widget, reason) in asks { runProvider(widget, reason: reason, at: now, into: &effects) }
    }

    /// Asks the scheduler for the family's provider run now; a refused request is a failed reload.
    mutating func runProvider(_ widget: WidgetID, reason: ReloadReason, at now: Instant,
                                      into effects: inout [SchedulerEffect]) {
        guard let job = timelines.definition(ofKind: widget.kind)?.job else { return }
        let identifier = WidgetSpec.providerIdentifier(job: job, family: widget.family.rawValue)
        let kind = scheduler.definitions[identifier]?.kind ?? .processing
        do throws(SchedulerError) {
            try scheduler.submit(TaskRequest(identifier: identifier, kind: kind, earliestBeginDate: now), at: now, into: &effects)
        } catch {
            feed(.providerFinished(widget, .failed(reason: "provider not requested: \(error)", expired: false)),
                 at: now, into: &effects)
        }
    }

    /// `{"kind": ..., "family": ..., "date": ..., "content": {...}, "relevance": ...}`: what a
    /// widget reads from the shared container.
    func publication(_ widget: WidgetID, _ entry: TimelineEntry) -> String {
        var text = "{\"kind\":\(quoted(widget.kind)),\"family\":\"\(widget.family.rawValue)\",\"date\":\"\(entry.date.iso8601)\",\"content\":\(entry.content)"
        if let relevance = entry.relevance, relevance.isFinite { text += ",\"relevance\":\(relevance)" }
        if let duration = entry.duration { text += ",\"durationSeconds\":\(duration.wholeMilliseconds / 1000)" }
        return text + "}\n"
    }

    // MARK: The activity machine

    @discardableResult
    mutating func feed(activity event: ActivityEvent, at now: Instant, into effects: inout [SchedulerEffect]) -> ActivityError? {
        activityEffects.removeAll(keepingCapacity: true)
        sideRevision &+= 1
        let error = activities.handle(event, at: now, into: &activityEffects)
        // `recordJSON` writes the bytes `encoder` writes, without it: every update saves and
        // publishes its activity. A save is usually followed by the same activity's publication:
        // encoded once for both.
        var last: (activity: Activity, text: String?)?
        var steps: [ActivityTransition] = []
        func record(_ activity: Activity) -> String? {
            if let last, last.activity == activity { return last.text }
            let text = activity.recordJSON
            last = (activity, text)
            return text
        }
        for effect in activityEffects {
            switch effect {
            case let .persist(change):
                guard stores else { continue }
                switch change {
                case let .save(activity):
                    guard let value = record(activity) else { continue }
                    effects.append(.persist(.putRecord(MachineRecord(table: ActivityChange.table, key: change.key, value: value))))
                case .delete: effects.append(.persist(.deleteRecord(table: ActivityChange.table, key: change.key)))
                }
            case let .publish(activity):
                let contents = activity.state == .dismissed ? nil : record(activity).map { $0 + "\n" }
                effects.append(.publish(Publication(path: "activities/\(activity.id).json", contents: contents)))
            case let .transition(transition):
                // The log line of the same transition carries it to observers; the store keeps
                // it for the replay's comparison (`WorldEvent.What.activity`).
                if stores { steps.append(transition) }
            case let .log(log):
                effects.append(.log(.activity(log)))
            }
        }
        for step in steps {
            // The updates so far: the activity as this event left it (a dismissed one is gone from
            // the machine: its last publication).
            let published = activityEffects.last { if case let .publish(a) = $0 { a.id == step.id } else { false } }
            var updates = activities.activities[step.id]?.updatesApplied
            if updates == nil, case let .publish(a)? = published { updates = a.updatesApplied }
            let what = WorldEvent.What.activity(id: step.id, to: step.to, cause: step.cause, updates: updates ?? 0)
            effects.append(.persist(.putRecord(WorldEvent(at: step.applied, what: what).record)))
        }
        return error
    }

    // MARK: Restore

    /// Hands the saved records to the timeline and activity machines (once, at start; always,
    /// even with nothing saved). A record that cannot be read is skipped, never fatal.
    mutating func restoreSideMachines(_ records: [MachineRecord], providersWaiting: Set<WidgetID> = [], at now: Instant,
                                      into effects: inout [SchedulerEffect]) {
        var widgets: [WidgetRecord] = []
        var counters: [WidgetDayCounter] = []
        var saved: [Activity] = []
        for record in records {
            let data = Data(record.value.utf8)
            switch record.table {
            case TimelineChange.widgetTable:
                if let value = try? decoder.decode(WidgetRecord.self, from: data) { widgets.append(value) }
            case TimelineChange.counterTable:
                if let value = try? decoder.decode(WidgetDayCounter.self, from: data) { counters.append(value) }
            case ActivityChange.table:
                if let value = try? decoder.decode(Activity.self, from: data) { saved.append(value) }
            default:
                break
            }
        }
        if let latest = counters.map(\.day).max() { counters = counters.filter { $0.day == latest } }
        feed(.restore(TimelineMachine.RestoredState(records: widgets, counters: counters, providersWaiting: providersWaiting)),
             at: now, into: &effects)
        feed(activity: .restore(saved), at: now, into: &effects)
        notifications.restore(records, into: &effects)
    }

    /// A run's exit as a notification tells it: the exit status or the signal.
    static func exitFacts(_ exit: RunExit) -> (exitStatus: Int32?, signal: Int32?) {
        switch exit {
        case let .exited(code): (code, nil)
        case let .signaled(signal): (nil, signal)
        default: (nil, nil)
        }
    }

    func putRecord(_ table: String, _ key: String, _ value: some Encodable, into effects: inout [SchedulerEffect]) {
        guard let data = try? encoder.encode(value) else { return }
        effects.append(.persist(.putRecord(MachineRecord(table: table, key: key, value: String(decoding: data, as: UTF8.self)))))
    }

    func quoted(_ text: String) -> String {
        (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
