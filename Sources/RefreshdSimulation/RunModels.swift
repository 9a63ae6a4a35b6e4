import Foundation
import RefreshdConfig
import RefreshdCore

/// One run's modelled behaviour, a command's, a provider's or an action's (see
/// `SimulatedActions`): the scenario's models and faults, looked up by identifier at every launch.
/// Built once by `Simulation.init`, so that the lookups are tables and not searches.
struct RunModels: Sendable {
    let models: [String: JobModel]
    let allowances: [String: Duration]
    let faults: [Fault]
    let counter: RunCounter
    let random: SeededRandom
    let side: SideJournal
    let zone: TimeZone
    let start: Instant
    let actions: SimulatedActions
    let widgets: [String: WidgetSpec]
    /// Timeline templates (issue 23): an instance's provider run `T[K]#family` plays its
    /// template's model for the instance's own widget (its kind derived from its values).
    let widgetTemplates: [String: TemplateSpec]
    let instanceValues: [String: [String: String]]
    /// Instances' values, for placeholders in a modelled activity's id and a staging
    /// template's reload kind and folder.
    let instanceParameters: [String: [String]]
    let instanceActivityValues: [String: [String: String]]

    init(scenario: Scenario, specs: [JobSpec], instanceModels: [String: JobModel], actions: SimulatedActions,
         counter: RunCounter, random: SeededRandom, side: SideJournal, zone: TimeZone) {
        (self.counter, self.random, self.side, self.zone, self.actions) = (counter, random, side, zone, actions)
        models = Dictionary(scenario.jobs.map { ($0.spec.identifier, $0.model) }, uniquingKeysWith: { a, _ in a })
            .merging(instanceModels, uniquingKeysWith: { a, _ in a })
        allowances = Dictionary(scenario.jobs.map { ($0.spec.identifier, $0.spec.definition.allowance) },
                                uniquingKeysWith: { a, _ in a })
        faults = scenario.faults
        widgets = Dictionary(specs.compactMap { spec in spec.widget.map { (spec.identifier, $0) } },
                             uniquingKeysWith: { a, _ in a })
        start = scenario.start
        let widgetTemplates = Dictionary(specs.compactMap { spec in spec.template.flatMap { $0.widget != nil ? (spec.identifier, $0) : nil } },
                                         uniquingKeysWith: { a, _ in a })
        self.widgetTemplates = widgetTemplates
        instanceValues = widgetTemplates.isEmpty ? [:] : Dictionary(specs.flatMap { spec in
            widgetTemplates[spec.identifier] == nil ? [] : (spec.instanceSource?.records ?? []).map { ($0.identifier, $0.values) }
        }, uniquingKeysWith: { a, _ in a })
        instanceParameters = Dictionary(specs.compactMap { spec in spec.template.map { (spec.identifier, $0.parameters) } },
                                        uniquingKeysWith: { a, _ in a })
        instanceActivityValues = scenario.jobs.contains(where: { $0.model.activity.map { Placeholders.mayHavePlaceholders($0.id) } ?? false })
            || specs.contains(where: { $0.template.map { $0.stagedKind != nil || !$0.pathParameters.isEmpty } ?? false })
            ? Dictionary(specs.flatMap { ($0.instanceSource?.records ?? []).map { ($0.identifier, $0.values) } }, uniquingKeysWith: { a, _ in a })
            : [:]
    }

    /// The run of `order`: a widget's provider call (a job's, or an instance's of a timeline
    /// template) plays the provider model; anything else its command's model (`command`).
    func behaviour(_ order: LaunchOrder) -> SimulatedHost.Behaviour {
        let id = order.identifier
        // Byte search: `lastIndex(of:)` on a String walks it character by character, and this
        // runs at every launch of every job.
        if !widgets.isEmpty, let hash = id.utf8.lastIndex(of: UInt8(ascii: "#")),
           let widget = widgets[String(id[..<hash])] {
            return providerBehaviour(order, job: String(id[..<hash]), widget: widget, model: models[String(id[..<hash])],
                                     allowance: allowances[String(id[..<hash])] ?? .seconds(30),
                                     playlist: actions.playlists[String(id[..<hash])])
        }
        if !widgetTemplates.isEmpty, let hash = id.utf8.lastIndex(of: UInt8(ascii: "#")),
           let split = InstanceName.split(String(id[..<hash])), let template = widgetTemplates[split.template] {
            let instance = String(id[..<hash])
            let values = instanceValues[instance].flatMap { $0.isEmpty ? nil : $0 }
                ?? Dictionary(uniqueKeysWithValues: template.parameters.map { ($0, split.key) })
            if let widget = template.instanceWidget(values) {
                side.noteInstanceKind(widget.kind, template: split.template)
                return providerBehaviour(order, job: instance, widget: widget, model: models[instance] ?? models[split.template],
                                         allowance: allowances[split.template] ?? .seconds(30),
                                         playlist: actions.playlists[split.template]?.filled(values))
            }
        }
        return command(order)
    }

    /// A command's or an action's run: its model's draw, then the faults that name this run, a
    /// staging model's days and a modelled activity's lines.
    func command(_ order: LaunchOrder) -> SimulatedHost.Behaviour {
        let id = order.identifier
        let n = counter.next(id, hint: order.slot)
        // An instance of a template (issue 23) behaves as its template's model says.
        let model = models[id] ?? InstanceName.split(id).flatMap { models[$0.template] } ?? .quickSuccess
        var (duration, exit) = model.draw(run: n, attempt: order.attempt, identifier: id, random: random)
        if let replayed = model.replayedDuration(order, run: n) { duration = replayed }
        var ignores = model.ignoresTerminate
        var silentAfter: Duration?
        for fault in faults {
            switch fault {
            case let .expireRun(job, run) where job == id && run == n:
                duration = (allowances[id] ?? .seconds(30)) * 2 + .seconds(1)
                ignores = false
            case let .crashRun(job, run) where job == id && run == n:
                duration = min(duration, .seconds(1))
                exit = .signaled(11)
            case let .activitySilent(job, run, after) where job == id && run == n:
                silentAfter = after
            default:
                break
            }
        }
        var results = model.results
        // A replayed run (`simulate --replay`) writes the lines it wrote then (`Replay.lines`).
        var recordedLines: [SimulatedHost.TimedLine]?
        if let recorded = model.replayedRun(id, n), !recorded.results.isEmpty {
            let lines = Replay.lines(recorded.results, start: order.started, duration: duration)
            recordedLines = lines.timed
            results = lines.atEnd
        }
        if let staging = actions.stagingModel(id) {
            // A modelled staging run: its days are staged if it ends in success. An instance
            // of a template whose folder or widget holds placeholders stages into its own
            // folder and reloads its own kind.
            var values: [String: String]?
            if staging.hasPlaceholders, let split = InstanceName.split(id) {
                values = instanceActivityValues[id].flatMap { $0.isEmpty ? nil : $0 }
                    ?? Dictionary(uniqueKeysWithValues: (instanceParameters[split.template] ?? []).map { ($0, split.key) })
            }
            let lines = actions.stagingStarted(order, model: staging, values: values)
            if exit == .exited(0) { results += lines }
        }
        let timed = recordedLines ?? model.activity.map { modelled -> [SimulatedHost.TimedLine] in
            // An instance's activity id holds its values as a kind does (each '@' "-at-").
            var activity = modelled
            if let split = InstanceName.split(id), Placeholders.mayHavePlaceholders(activity.id) {
                var values = instanceActivityValues[id] ?? [:]
                if values.isEmpty {
                    for name in instanceParameters[split.template] ?? [] { values[name] = split.key }
                }
                activity.id = Placeholders.fill(activity.id, values.mapValues(InstanceKind.form))
            }
            return activity.lines(run: n, start: order.started, duration: duration, silentAfter: silentAfter)
                .map { SimulatedHost.TimedLine(offset: $0.offset, line: $0.line) }
        } ?? []
        return SimulatedHost.Behaviour(duration: duration, exit: exit, ignoresTerminate: ignores,
                                       output: model.output, results: results, timedResults: timed,
                                       groupChildren: model.children,
                                       resultsHolder: model.resultsHeldOpen.map { held in
                                           switch held {
                                           case let .closesAfter(span): .closesAfter(span)
                                           case .forever: .never
                                           }
                                       }, memoryBytes: model.memoryBytes)
    }

    /// One provider call of a timeline job's family: the timeline its model returns as the real
    /// results line, garbage or an overrun when a fault says so.
    func providerBehaviour(_ order: LaunchOrder, job: String, widget: WidgetSpec, model: JobModel?, allowance: Duration,
                           playlist: PlaylistModel?) -> SimulatedHost.Behaviour {
        let id = order.identifier
        let container = actions.container
        let model = model ?? .quickSuccess
        let n = counter.next(id, hint: order.slot)
        let providerRun = side.nextProviderRun(job)
        var (duration, exit) = model.draw(run: n, attempt: order.attempt, identifier: id, random: random)
        if let replayed = model.replayedDuration(order, run: n) { duration = replayed }
        var garbage = false
        for fault in faults {
            switch fault {
            case let .providerGarbage(j, run, span) where j == job:
                if let run, run == providerRun { garbage = true }
                if let span {
                    let from = span.start.instant(start: start)
                    if order.started >= from, order.started < from + span.duration { garbage = true }
                }
            case let .providerExpires(j, run) where j == job && run == providerRun:
                duration = allowance * 2 + .seconds(1)
            case let .expireRun(j, run) where j == id && run == n:
                duration = allowance * 2 + .seconds(1)
            case let .crashRun(j, run) where j == id && run == n:
                duration = min(duration, .seconds(1))
                exit = .signaled(11)
            default:
                break
            }
        }
        let timeline = model.timeline ?? .oneEntryAtEnd
        // A replayed run (`simulate --replay`) writes the lines it wrote then: the timeline it
        // returned, its upstream fetch as it was.
        if !garbage, playlist == nil, let recorded = model.replayedRun(id, n), !recorded.results.isEmpty {
            let family = WidgetSpec.family(ofProviderIdentifier: id) ?? ""
            for line in recorded.results {
                guard case let .timeline(returned, _) = ResultLine.parse(line, owner: job, namespace: "", now: order.started) else { continue }
                side.noteReturned(returned.entries.map {
                    SideJournal.entryKey(widget: "\(widget.kind)/\(family)", date: $0.date.iso8601, content: $0.content)
                })
            }
            return SimulatedHost.Behaviour(duration: duration, exit: exit, ignoresTerminate: model.ignoresTerminate,
                                           output: model.output, results: recorded.results)
        }
        // The timeline is computed when the provider runs and written just before it exits.
        let line: String
        if garbage {
            line = #"{"entries": "garbage", "policy": 42}"#
        } else if let playlist {
            // The modelled playlist provider: today's staged playlist, a fallback, or nothing.
            let family = WidgetSpec.family(ofProviderIdentifier: id) ?? ""
            let widgetID = "\(widget.kind)/\(family)"
            if container.stagedDates(folder: playlist.folder).isEmpty {
                // Before its folder's first staging run: the real provider writes `{"waiting": ...}`.
                return SimulatedHost.Behaviour(duration: duration, exit: exit, ignoresTerminate: model.ignoresTerminate,
                                               output: model.output, results: model.results + [playlist.waitingLine])
            }
            guard let timeline = playlist.timeline(family: family, at: order.started, container: container) else {
                return SimulatedHost.Behaviour(duration: duration, exit: exit == .exited(0) ? .exited(1) : exit,
                                               ignoresTerminate: model.ignoresTerminate,
                                               output: model.output + ["no playlist staged in \(playlist.folder)/playlists"],
                                               results: model.results)
            }
            line = timeline.line
            side.noteReturned(timeline.entries.map {
                SideJournal.entryKey(widget: widgetID, date: $0.date.iso8601, content: $0.content)
            })
            side.notePlaylist(widget: widgetID, entries: timeline.entries.map { ($0.date, timeline.fallback) })
        } else {
            let now = order.started
            let fetched = timeline.upstreamFetch && side.fetches(kind: widget.kind, at: now, window: widget.sharedFetch)
            line = timeline.resultLine(at: now, zone: zone, upstreamFetch: fetched)
            let family = WidgetSpec.family(ofProviderIdentifier: id) ?? ""
            side.noteReturned(timeline.entryDates(at: now, zone: zone).map {
                SideJournal.entryKey(widget: "\(widget.kind)/\(family)", date: $0.date.iso8601, content: "{\"asset\":\"\($0.content)\"}")
            })
        }
        return SimulatedHost.Behaviour(duration: duration, exit: exit, ignoresTerminate: model.ignoresTerminate,
                                       output: model.output, results: model.results + [line])
    }
}
