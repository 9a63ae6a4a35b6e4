import Foundation
import RefreshdCalendar
import RefreshdCore

/// The settings of one job file as they are read, before they are combined into a `JobConfig`.
///
/// Each `read` checks one top-level setting and records it (or an error); `checkConsistency`
/// then applies the rules that involve several settings, such as `requires` needing
/// `kind: processing` and the required keys being present. Calendar expressions are read as
/// text first and built by `resolveCalendars` once the whole file (and so `timezone:`) is known.
struct JobSettings {
    let file: String
    let projectRoot: String
    let searchPath: String?
    /// When the file is loaded: calendar expressions must elapse after it.
    let now: Instant
    /// The zone of calendar expressions when neither `timezone:` nor the expression names one.
    let defaultTimeZone: TimeZone
    /// The file's text, to place errors inside multi-line or escaped values.
    let source: SourceText

    var identifier: (value: String, location: Location)?
    var identifierSeen = false
    var kind: TaskKind = .appRefresh
    var kindLocation: Location?
    var kindIsValid = true
    var command: [String]?
    var commandSeen = false
    var earliest: EarliestSpec = .relative(.zero)
    var allowance: Duration?
    var grace: Duration = .seconds(5)
    var resubmit: ResubmitPolicy = .none
    /// `resubmit: {calendar: ...}` before its zone is known: the text, its node, `resubmit.timezone`.
    var resubmitCalendar: (text: String, node: YAMLNode, zone: TimeZone?)?
    /// `earliest:`'s text and node, parsed once the job's zone is known.
    var earliestText: (text: String, node: YAMLNode)?
    /// `timezone:`, the job's zone for calendar expressions.
    var timeZone: TimeZone?
    var missed: MissedPolicy = .once
    var missedIsValid = true
    var missedWasDefaulted = true
    var catchUp: Duration = .seconds(86_400)
    var catchUpKeyLocation: Location?
    var jitter: Duration = .zero
    var fixedJitter = false
    var accuracy: Duration = .zero
    var retry: RetryPolicy?
    var requires: (power: Bool, network: Bool, keyLocation: Location) = (false, false, .start)
    /// `namespace:` as written; nil without one (the identifier's app prefix is used).
    var namespace: String?
    var namespaceIsValid = true
    var environment: [String: String] = [:]
    /// `on-failure:` and `on-recovery:` (`NotifierReader`).
    var notifiers = JobNotifiers()
    var commandLocation: Location?
    var environmentLocation: Location?
    /// The `simulate:` block, how the job behaves in simulation.
    var simulate: JobModel?
    /// Where `simulate:` is, for `simulate.instances` on a job that is not a template.
    var simulateLocation: Location?
    /// `kind: timeline`: the job provides a widget's timelines (`widget:` is required).
    var isTimeline = false
    var widgetNode: (keyNode: YAMLNode, value: YAMLNode)?
    var widget: WidgetSpec?
    /// `provider: playlist`, instead of a command.
    var providerIsPlaylist = false
    var providerLocation: Location?
    /// `action: stage-playlist`, instead of a command: where its value is.
    var actionLocation: Location?
    var actionIsValid = false
    /// The `stage-playlist:` block, read once the job's zone is known.
    var stageNode: (keyNode: YAMLNode, value: YAMLNode)?
    var action: ActionSpec?
    /// A staging template's `stage-playlist.widget` holding placeholders.
    var stagedKind: String?
    /// `template: true` and `parameters:` (issue 23), and the nodes whose placeholders it checks.
    var template = TemplateSettings()
    /// `limits:` (issue 35): what each run of the command may use.
    var limits = JobLimits()
    /// Where the `limits:` key is, for the rule that limits apply to a command.
    var limitsLocation: Location?
    /// `user:` and `group:` (issue 35) as read, with their values' nodes; `runAs` once resolved.
    var userNode: (text: String, node: YAMLNode)?
    var groupNode: (text: String, node: YAMLNode)?
    var runAs: RunAs?
    /// How `user:` is checked and resolved (nil: read for simulation, unresolved).
    var accounts: Accounts?

    init(file: String, projectRoot: String, searchPath: String?, now: Instant, defaultTimeZone: TimeZone,
         source: SourceText) {
        self.source = source
        self.file = file
        self.projectRoot = projectRoot
        self.searchPath = searchPath
        self.now = now
        self.defaultTimeZone = defaultTimeZone
    }

    mutating func read(key: String, keyNode: YAMLNode, value: YAMLNode, _ sink: inout ErrorSink) {
        let reader = ValueReader(key: key, node: value)
        switch key {
        case "identifier":
            identifierSeen = true
            identifier = SettingRules.identifier(reader, &sink).map { ($0, value.location) }
        case "kind":
            kindLocation = value.location
            if let text = reader.oneOf(TaskKind.allCases.map(\.rawValue) + ["timeline"], &sink) {
                // A timeline job's provider runs are processing runs: up to 10 pending per
                // namespace, so every family can have its reload pending at once.
                isTimeline = text == "timeline"
                kind = TaskKind(rawValue: text) ?? .processing
            } else {
                kindIsValid = false
            }
        case "template":
            template.readTemplate(reader, &sink)
        case "instances":
            template.instancesNode = (keyNode, value)
        case "parameters":
            template.readParameters(reader, keyNode: keyNode, &sink)
        case "command":
            template.commandNode = value
            commandSeen = true
            commandLocation = value.location
            command = SettingRules.command(reader, resolver: CommandResolver(projectRoot: projectRoot, searchPath: searchPath), &sink)
        case "earliest":
            guard let text = reader.string(&sink, expected: "+DURATION, an ISO 8601 date or a calendar expression") else { return }
            earliestText = (text, value)
        case "allowance":
            allowance = reader.duration(&sink, positive: true)
        case "grace":
            grace = reader.duration(&sink, positive: false) ?? grace
        case "resubmit":
            readResubmit(reader, &sink)
        case "retry":
            retry = SettingRules.retry(reader, &sink)
        case "requires":
            requires.keyLocation = keyNode.location
            let values = SettingRules.requires(reader, &sink)
            requires.power = values.contains("external-power")
            requires.network = values.contains("network")
        case "namespace":
            namespace = SettingRules.namespace(reader, &sink)
            namespaceIsValid = namespace != nil
        case "environment":
            template.environmentNode = value
            environmentLocation = value.location
            environment = SettingRules.environment(reader, &sink)
        case "timezone":
            timeZone = reader.timeZone(&sink)
        case "missed":
            if let text = reader.oneOf(MissedPolicy.allCases.map(\.rawValue), &sink), let policy = MissedPolicy(rawValue: text) {
                missed = policy
                missedWasDefaulted = false
            } else {
                missedIsValid = false
            }
        case "catch-up":
            catchUpKeyLocation = keyNode.location
            catchUp = reader.duration(&sink, positive: true) ?? catchUp
        case "jitter":
            jitter = reader.duration(&sink, positive: false) ?? jitter
        case "fixed-jitter":
            fixedJitter = reader.bool(&sink) ?? fixedJitter
        case "accuracy":
            accuracy = reader.duration(&sink, positive: false) ?? accuracy
        case "simulate":
            simulateLocation = value.location
            template.simulateNode = value
            simulate = SimulateBlock.read(reader, &sink)
        case "widget":
            widgetNode = (keyNode, value)
        case "provider":
            providerLocation = keyNode.location
            if reader.oneOf(["playlist"], &sink) != nil { providerIsPlaylist = true }
        case "action":
            actionLocation = value.location
            actionIsValid = reader.oneOf([ActionSpec.stagePlaylistName], &sink) != nil
        case ActionSpec.stagePlaylistName:
            stageNode = (keyNode, value)
        case "limits":
            limitsLocation = keyNode.location
            limits = LimitsReader.read(reader, &sink) ?? limits
        case "user":
            if let text = reader.string(&sink, expected: RunAsReader.userExpected) { userNode = (text, value) }
        case "group":
            if let text = reader.string(&sink, expected: RunAsReader.groupExpected) { groupNode = (text, value) }
        case "on-failure":
            notifiers.onFailure = NotifierReader.read(reader, resolver: CommandResolver(projectRoot: projectRoot, searchPath: searchPath), &sink)
        case "on-recovery":
            notifiers.onRecovery = NotifierReader.read(reader, resolver: CommandResolver(projectRoot: projectRoot, searchPath: searchPath), &sink)
        default:
            break
        }
    }

    /// `{after: DURATION}` or `{calendar: EXPRESSION, timezone: ZONE}`: exactly one of after and calendar.
    private mutating func readResubmit(_ reader: ValueReader, _ sink: inout ErrorSink) {
        guard let pairs = reader.mapping(known: ["after", "calendar", "timezone"], &sink) else { return }
        let after = pairs.first(where: { $0.key == "after" })
        let calendar = pairs.first(where: { $0.key == "calendar" })
        let zone = pairs.first(where: { $0.key == "timezone" })
        var zoneValue: TimeZone?
        if let zone {
            zoneValue = ValueReader(key: "resubmit.timezone", node: zone.value).timeZone(&sink)
            if calendar == nil, after != nil {
                sink.add(at: zone.keyNode.location, "resubmit.timezone: applies only to resubmit.calendar; "
                    + "expected calendar: EXPRESSION beside it, or no timezone: (after: counts real time)")
            }
        }
        switch (after, calendar) {
        case (nil, nil):
            if sink.suggestedKeys.contains("resubmit.after") || sink.suggestedKeys.contains("resubmit.calendar") { return }
            sink.add(at: reader.node.location, "resubmit: missing required key \"after\" or \"calendar\" "
                + "(expected after: DURATION, like after: 6h, or calendar: EXPRESSION, like calendar: \"*-*-* 04:00\")")
        case (let after?, let calendar?):
            let second = pairs.first(where: { $0.key == "after" || $0.key == "calendar" })?.key == "after" ? calendar : after
            sink.add(at: second.keyNode.location, "resubmit: expected either after: or calendar:, found both")
        case (let after?, nil):
            if let duration = ValueReader(key: "resubmit.after", node: after.value).duration(&sink, positive: true) {
                resubmit = .after(duration)
            }
        case (nil, let calendar?):
            let calendarReader = ValueReader(key: "resubmit.calendar", node: calendar.value)
            if let text = calendarReader.string(&sink, expected: "a calendar expression like \"*-*-* 04:00\"") {
                resubmitCalendar = (text, calendar.value, zoneValue)
            }
        }
    }

    /// Builds `resubmit.calendar` and `earliest:` in their zones (the expression's own, else
    /// `resubmit.timezone` for resubmit, else `timezone:`, else the machine's), reporting
    /// syntax errors at their exact column and expressions that never elapse after `now`.
    mutating func resolveCalendars(_ sink: inout ErrorSink) {
        let jobZone = timeZone ?? defaultTimeZone
        if let (text, node, zone) = resubmitCalendar {
            do {
                let calendar = try CalendarSchedule(parsing: text)
                let schedule = CalendarScheduleBuilder.schedule(calendar, zone: zone ?? jobZone)
                if checkElapses(schedule, key: "resubmit.calendar", text: text, node: node, &sink) {
                    resubmit = .calendar(schedule)
                }
            } catch {
                let found = error.found.map { EchoText.quoted($0) } ?? "end of expression"
                sink.add(at: node.location(ofTextColumn: error.column, in: source),
                         "resubmit.calendar: expected \(error.expected), found \(found)\(error.hintSuffix)")
            }
        }
        if let (text, node) = earliestText {
            switch EarliestSpec.parse(text, zone: jobZone) {
            case .success(let spec):
                if let schedule = spec.schedule {
                    guard checkElapses(schedule, key: "earliest", text: text, node: node, &sink) else { return }
                }
                earliest = spec
            case .failure(let problem):
                sink.add(at: problem.column.map { node.location(ofTextColumn: $0, in: source) } ?? node.location, "earliest: \(problem)")
            }
        }
    }

    /// False, with an error at the value, when `schedule` has no slot after `now`.
    private func checkElapses(_ schedule: Schedule, key: String, text: String, node: YAMLNode,
                              _ sink: inout ErrorSink) -> Bool {
        if schedule.next(after: now) != nil { return true }
        sink.add(at: node.location, "\(key): \(EchoText.quoted(text)) never elapses after \(ISO8601.format(now)) "
            + "(in \(schedule.text)); expected a calendar expression with a future elapse")
        return false
    }

    /// Rules across settings: required keys, and `requires` only on processing jobs.
    func checkConsistency(mappingLocation: Location, _ sink: inout ErrorSink) {
        if !identifierSeen, !sink.suggestedKeys.contains("identifier") {
            sink.add(at: mappingLocation,
                     "missing required key \"identifier\" (expected a reverse-DNS name like com.example.refresh)")
        }
        checkTimeline(mappingLocation: mappingLocation, &sink)
        if !commandSeen, providerLocation == nil, actionLocation == nil, !sink.suggestedKeys.contains("command"),
           !sink.suggestedKeys.contains("action") {
            sink.add(at: mappingLocation, "missing required key \"command\" "
                + "(expected a list like [\"Scripts/refresh\", \"--flag\"], or action: stage-playlist)")
        }
        checkAction(&sink)
        if let limitsLocation, !commandSeen, providerIsPlaylist || actionLocation != nil {
            sink.add(at: limitsLocation, "limits: apply to the job's command, and this job runs "
                + (providerIsPlaylist ? "provider: playlist" : "action: stage-playlist") + " in refreshd; expected command:, or no limits:")
        }
        if kindIsValid, kind == .appRefresh, requires.power || requires.network {
            let needs = [requires.power ? "external-power" : nil, requires.network ? "network" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            sink.add(at: requires.keyLocation,
                     "requires: only processing jobs can require \(needs), but this job's kind is app-refresh; "
                     + "expected kind: processing, or no requires:")
        }
        checkExecSize(&sink)
        if let catchUpKeyLocation, missedIsValid, missed != .all {
            sink.add(at: catchUpKeyLocation, "catch-up: applies only to missed: all, but this job's missed policy is "
                + "\(missed.rawValue)\(missedWasDefaulted ? " (the default)" : ""); expected missed: all, or no catch-up:")
        }
    }

    /// The command and environment together must fit what exec accepts (each string was
    /// checked on its own when read).
    func checkExecSize(_ sink: inout ErrorSink) {
        guard let command else { return }
        let argv = command.reduce(0) { $0 + $1.utf8.count + 1 }
        let env = environment.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 }
        let limit = JobFileLimits.maximumExecTotalBytes
        guard argv + env > limit else { return }
        sink.add(at: env > argv ? (environmentLocation ?? .start) : (commandLocation ?? .start),
                 "command and environment: \(argv + env) bytes together (\(argv) in the command, \(env) in the environment); "
                 + "expected at most \(limit) bytes (1 MiB), or every launch would fail with E2BIG (argument list too long)")
    }

    /// `kind: timeline` needs `widget:`; `widget:` and `provider:` need `kind: timeline`; a
    /// provider is a command or `provider: playlist`, not both.
    func checkTimeline(mappingLocation: Location, _ sink: inout ErrorSink) {
        if isTimeline, widgetNode == nil, !sink.suggestedKeys.contains("widget") {
            sink.add(at: kindLocation ?? mappingLocation, "kind: timeline needs a widget: block "
                + "(expected widget: {kind: NAME, families: [systemSmall, ...]})")
        }
        if !isTimeline, kindIsValid, let widgetNode {
            sink.add(at: widgetNode.keyNode.location, "widget: applies only to kind: timeline; expected kind: timeline, or no widget:")
        }
        if !isTimeline, kindIsValid, let providerLocation {
            sink.add(at: providerLocation, "provider: applies only to kind: timeline; expected kind: timeline, or no provider:")
        }
        if providerIsPlaylist, commandSeen, let providerLocation {
            sink.add(at: providerLocation, "provider: playlist replaces command:; expected one of them, found both")
        }
    }

    /// `action:` replaces `command:`, needs its `stage-playlist:` block and is not a timeline's
    /// provider; the block needs the action.
    func checkAction(_ sink: inout ErrorSink) {
        if let actionLocation {
            if commandSeen {
                sink.add(at: actionLocation, "action: replaces command:; expected one of them, found both")
            }
            if isTimeline {
                sink.add(at: actionLocation, "action: applies to app-refresh and processing jobs; a timeline's provider is "
                    + "command: or provider: playlist")
            }
            if actionIsValid, stageNode == nil, !sink.suggestedKeys.contains(ActionSpec.stagePlaylistName) {
                sink.add(at: actionLocation, "action: stage-playlist needs a stage-playlist: block (expected \(StageBlock.example))")
            }
        } else if let stageNode, !sink.suggestedKeys.contains("action") {
            sink.add(at: stageNode.keyNode.location, "stage-playlist: applies only to action: stage-playlist; "
                + "expected action: stage-playlist beside it, or no stage-playlist:")
        }
    }

    /// Reads `stage-playlist:` once `timezone:` is known (any order in the file).
    mutating func resolveAction(_ sink: inout ErrorSink) {
        guard actionIsValid, let stageNode else { return }
        let reader = ValueReader(key: ActionSpec.stagePlaylistName, node: stageNode.value)
        let options = StageBlock.read(reader, projectRoot: projectRoot, zone: timeZone ?? defaultTimeZone,
                                      parameters: template.isTemplate ? (template.parameters ?? []) : nil, source: source, &sink)
        action = options.map(StageBlock.action)
        if template.isTemplate, let kind = options?.widgetKind, Placeholders.mayHavePlaceholders(kind) { stagedKind = kind }
    }

    /// Reads `widget:` once `provider:` is known (any order in the file).
    mutating func resolveWidget(_ sink: inout ErrorSink) {
        guard isTimeline, let widgetNode else { return }
        let zone = providerIsPlaylist ? (timeZone ?? defaultTimeZone).identifier : nil
        let parameters = template.isTemplate ? (template.parameters ?? []) : nil
        widget = WidgetBlock.read(ValueReader(key: "widget", node: widgetNode.value), playlistZone: zone,
                                  parameters: parameters, source: source, &sink)
    }

    /// What the checks across files need, once the identifier is known (nil before), even when
    /// other settings have errors. A kind or namespace that is invalid or misspelt (`knd:`) is
    /// unknown, so no namespace limit is checked against a guess.
    func identity(_ sink: ErrorSink, modified: Int64?) -> JobIdentity? {
        guard let identifier else { return nil }
        let kindKnown = kindIsValid && !sink.suggestedKeys.contains("kind")
        let namespaceKnown = namespaceIsValid && !sink.suggestedKeys.contains("namespace")
        return JobIdentity(identifier: identifier.value, identifierLocation: identifier.location,
                           kind: kindKnown ? kind : nil, kindLocation: kindLocation,
                           namespace: namespaceKnown ? (namespace ?? defaultNamespace(of: identifier.value)) : nil,
                           namespaceIsDerived: namespace == nil, file: file, modified: modified)
    }

    /// The job, when every setting was valid.
    func job() -> JobConfig? {
        guard let identifier, let command = command ?? (providerIsPlaylist || action != nil ? [] : nil) else { return nil }
        if isTimeline, widget == nil { return nil }
        if actionLocation != nil, action == nil { return nil }
        let definition = TaskDefinition(
            identifier: identifier.value, kind: kind,
            namespace: namespace ?? defaultNamespace(of: identifier.value), allowance: allowance,
            grace: grace, resubmit: resubmit, retry: retry,
            requiresExternalPower: requires.power, requiresNetworkConnectivity: requires.network,
            missed: missed, catchUp: catchUp, jitter: jitter, fixedJitter: fixedJitter, accuracy: accuracy)
        var config = JobConfig(definition: definition, command: command, environment: environment,
                         earliest: earliest, file: file, line: identifier.location.line,
                         projectRoot: projectRoot, simulate: simulate, widget: widget, action: action,
                         parameters: template.isTemplate ? template.parameters : nil, instances: template.source,
                         notifiers: notifiers, pathParameters: template.pathParameters, stagedKind: stagedKind)
        config.widgetKindLocation = widgetKindLocation
        config.limits = limits
        config.runAs = runAs
        return config
    }

    /// Where `widget.kind`'s value is, if written.
    var widgetKindLocation: Location? {
        guard case let .mapping(pairs, _)? = widgetNode?.value else { return nil }
        return pairs.first { $0.key.scalarText == "kind" }?.value.location
    }

    /// The namespace without `namespace:`: the identifier's app prefix, except for a template,
    /// whose instances are in a namespace of their own, its identifier (so that a million
    /// pending instances never count against the app's other jobs, a sync job among them).
    func defaultNamespace(of identifier: String) -> String {
        template.isTemplate ? identifier : SettingRules.defaultNamespace(of: identifier)
    }
}
