import RefreshdCore
import Yams

/// The settings of one job file as they are read, before they are combined into a `JobConfig`.
///
/// Each `read` checks one top-level setting and records it (or an error); `checkConsistency`
/// then applies the rules that involve several settings, such as `requires` needing
/// `kind: processing` and the required keys being present.
struct JobSettings {
    let file: String
    let projectRoot: String
    let searchPath: String?

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
    var retry: RetryPolicy?
    var requires: (power: Bool, network: Bool, keyLocation: Location) = (false, false, .start)
    var namespace = "default"
    var environment: [String: String] = [:]

    init(file: String, projectRoot: String, searchPath: String?) {
        self.file = file
        self.projectRoot = projectRoot
        self.searchPath = searchPath
    }

    mutating func read(key: String, keyNode: Node, value: Node, _ sink: inout ErrorSink) {
        let reader = ValueReader(key: key, node: value)
        switch key {
        case "identifier":
            identifierSeen = true
            identifier = SettingRules.identifier(reader, &sink).map { ($0, value.location) }
        case "kind":
            kindLocation = value.location
            if let text = reader.oneOf(TaskKind.allCases.map(\.rawValue), &sink), let parsed = TaskKind(rawValue: text) {
                kind = parsed
            } else {
                kindIsValid = false
            }
        case "command":
            commandSeen = true
            command = SettingRules.command(reader, resolver: CommandResolver(projectRoot: projectRoot, searchPath: searchPath), &sink)
        case "earliest":
            guard let text = reader.string(&sink, expected: "+DURATION or an ISO 8601 date") else { return }
            switch EarliestSpec.parse(text) {
            case .success(let spec): earliest = spec
            case .failure(let message): sink.add(at: value.location, "earliest: \(message)")
            }
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
            namespace = SettingRules.namespace(reader, &sink) ?? namespace
        case "environment":
            environment = SettingRules.environment(reader, &sink)
        default:
            break
        }
    }

    private mutating func readResubmit(_ reader: ValueReader, _ sink: inout ErrorSink) {
        guard let pairs = reader.mapping(known: ["after"], &sink) else { return }
        guard let after = pairs.first(where: { $0.key == "after" }) else {
            if sink.suggestedKeys.contains("resubmit.after") { return }
            sink.add(at: reader.node.location, "resubmit: missing required key \"after\" (expected after: DURATION, like after: 6h)")
            return
        }
        if let duration = ValueReader(key: "resubmit.after", node: after.value).duration(&sink, positive: true) {
            resubmit = .after(duration)
        }
    }

    /// Rules across settings: required keys, and `requires` only on processing jobs.
    func checkConsistency(mappingLocation: Location, _ sink: inout ErrorSink) {
        if !identifierSeen, !sink.suggestedKeys.contains("identifier") {
            sink.add(at: mappingLocation,
                     "missing required key \"identifier\" (expected a reverse-DNS name like com.example.refresh)")
        }
        if !commandSeen, !sink.suggestedKeys.contains("command") {
            sink.add(at: mappingLocation,
                     "missing required key \"command\" (expected a list like [\"Scripts/refresh\", \"--flag\"])")
        }
        if kindIsValid, kind == .appRefresh, requires.power || requires.network {
            let needs = [requires.power ? "external-power" : nil, requires.network ? "network" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            sink.add(at: requires.keyLocation,
                     "requires: only processing jobs can require \(needs), but this job's kind is app-refresh; "
                     + "expected kind: processing, or no requires:")
        }
    }

    /// The job, when every setting was valid.
    func job() -> ParsedJob? {
        guard let identifier, let command else { return nil }
        let definition = TaskDefinition(
            identifier: identifier.value, kind: kind, namespace: namespace, allowance: allowance,
            grace: grace, resubmit: resubmit, retry: retry,
            requiresExternalPower: requires.power, requiresNetworkConnectivity: requires.network)
        let config = JobConfig(definition: definition, command: command, environment: environment,
                               earliest: earliest, file: file, line: identifier.location.line,
                               projectRoot: projectRoot)
        return ParsedJob(config: config, identifierLocation: identifier.location, kindLocation: kindLocation)
    }
}
