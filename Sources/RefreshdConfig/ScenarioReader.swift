import Foundation
import RefreshdCore

/// Reads one scenario file's YAML into a `ScenarioConfig`, collecting every problem: the scenario's
/// own settings, its inline jobs (read exactly as job files are, located in the scenario file)
/// or its jobs folder (errors in the folder's files as `JobDirectory.load` gives them), and the
/// jobs and instants its faults and expectations name.
struct ScenarioReader {
    /// Every top-level key, in the order the documentation lists them.
    static let keys = ["name", "jobs", "start", "days", "seed", "timezone", "max-concurrent", "device", "faults", "expect", "nodes", "node-faults"]
    static let maximumDays = 366
    static let maximumConcurrentRuns = 1000

    let file: String
    let searchPath: String?
    let limits: SchedulerConfiguration
    /// The start when the file has no `start:`.
    let defaultStart: Instant
    /// The zone when the file has no `timezone:`, an IANA name.
    let defaultTimeZone: String

    func parse(yaml text: String) -> Result<ScenarioConfig, ConfigErrors> {
        var sink = ErrorSink(file: file)
        let yaml = SourceText.withoutByteOrderMark(text)  // allowed by YAML, as in job files
        guard let (mapping, mappingLocation) = rootMapping(yaml, &sink) else {
            return .failure(ConfigErrors(JobFileParser.capped(sink.errors)))
        }

        var scenario = ScenarioConfig(name: Self.defaultName(of: file), jobs: [], start: defaultStart, timeZone: defaultTimeZone)
        var zone: TimeZone?
        var windowKnown = true
        var references = ScenarioReferences()
        var jobsPair: (keyNode: YAMLNode, value: YAMLNode)?
        var nodeFaults: (key: String, keyNode: YAMLNode, value: YAMLNode)?
        let pairs = MappingReader.pairs(of: mapping, known: Self.keys, prefix: "", &sink)
        for pair in pairs {
            let reader = ValueReader(key: pair.key, node: pair.value)
            switch pair.key {
            case "name":
                if let name = reader.line(&sink) { scenario.name = name }
            case "jobs":
                jobsPair = (pair.keyNode, pair.value)
            case "start":
                if let start = reader.date(&sink) { scenario.start = start } else { windowKnown = false }
            case "days":
                if let days = reader.integer(in: 1...Self.maximumDays, &sink) { scenario.days = days } else { windowKnown = false }
            case "seed":
                if let seed = reader.seed(&sink) { scenario.seed = seed }
            case "timezone":
                // The name as written: Foundation may call UTC "GMT".
                if let value = reader.timeZone(&sink), let name = pair.value.scalarText {
                    zone = value
                    scenario.timeZone = name
                }
            case "max-concurrent":
                if let count = reader.integer(in: 1...Self.maximumConcurrentRuns, &sink) { scenario.maxConcurrentRuns = count }
            case "device":
                if let device = DeviceReader.read(reader, &references, &sink) { scenario.device = device }
            case "faults":
                scenario.faults = FaultReader.read(reader, &references, &sink) ?? []
            case "expect":
                scenario.expectations = ExpectationReader.read(reader, &references, &sink) ?? []
            case "nodes":
                if let nodes = reader.integer(in: 1...ClusterModel.maximumNodes, &sink) {
                    scenario.cluster = ClusterModel(nodes: nodes, faults: scenario.cluster?.faults ?? [])
                }
            case "node-faults":
                nodeFaults = pair
            default:
                break
            }
        }

        if zone == nil, !pairs.contains(where: { $0.key == "timezone" }) {
            zone = ValueReader.isZoneName(defaultTimeZone) ? TimeZone(identifier: defaultTimeZone) : nil
            if zone == nil {
                sink.add(at: mappingLocation, "the default time zone \(EchoText.quoted(defaultTimeZone)) is not an IANA time zone; "
                    + "expected timezone: ZONE in the scenario file, like timezone: Europe/Paris")
            }
        }
        if let nodeFaults { readNodeFaults(nodeFaults, into: &scenario, &sink) }
        if scenario.cluster != nil, scenario.expectations.contains(where: { $0 != .noViolation }) {
            sink.add(at: mappingLocation, "expect: a scenario with nodes: checks the cluster's invariants only; expected no-violation as its one expectation")
        }
        let jobZone = zone ?? TimeZone(secondsFromGMT: 0)!
        var otherFiles: [ConfigError] = []
        var identifiers: [String]?
        if let jobsPair {
            let reader = ValueReader(key: "jobs", node: jobsPair.value)
            let loaded = jobs(reader, start: scenario.start, zone: jobZone, source: SourceText(text: yaml), &sink, &otherFiles)
            scenario.jobs = loaded.jobs
            identifiers = loaded.identifiers
        } else if !sink.suggestedKeys.contains("jobs") {
            sink.add(at: mappingLocation, "missing required key \"jobs\" (expected a jobs folder like jobs: ../../Jobs, "
                + "or a list of jobs like jobs: [{identifier: com.example.refresh, command: [/bin/true]}])")
        }
        let templates = Dictionary(scenario.jobs.compactMap { job in
            job.spec.template.map { _ in (job.spec.identifier, job.spec.instanceSource?.records.map(\.key)) }
        }, uniquingKeysWith: { a, _ in a })
        references.check(identifiers: identifiers, templates: templates, start: windowKnown ? scenario.start : nil,
                         days: windowKnown ? scenario.days : nil, &sink)
        let errors = JobFileParser.capped(sink.errors) + otherFiles
        return errors.isEmpty ? .success(scenario) : .failure(ConfigErrors(errors))
    }

    /// The scenario's top-level mapping, composed from `yaml` (its size, syntax and shape
    /// checked first); nil with the errors in `sink` when there is none to read.
    private func rootMapping(_ yaml: String, _ sink: inout ErrorSink) -> ([(key: YAMLNode, value: YAMLNode)], Location)? {
        let size = yaml.utf8.count
        if size > JobFileLimits.maximumFileSize {
            sink.add(at: .start, JobFileParser.sizeMessage(bytes: size, kind: .scenario))
            return nil
        }
        let document: YAMLComposer.Document
        switch YAMLComposer.compose(yaml, kind: .scenario) {
        case .failure(let failure):
            sink.add(at: failure.location, failure.message)
            return nil
        case .success(let composed):
            document = composed
        }
        for problem in document.problems { sink.add(at: problem.location, problem.message) }
        let expected = "expected a mapping of scenario settings (jobs:, days:, faults:, expect:, ...)"
        guard let root = document.root, !root.isNullScalar else {
            if document.problems.isEmpty { sink.add(at: .start, "\(expected), found an empty file") }
            return nil
        }
        guard case .mapping(let mapping, let mappingLocation) = root else {
            sink.add(at: root.location, "\(expected), found \(root.foundDescription)")
            return nil
        }
        return (mapping, mappingLocation)
    }

    /// `node-faults:`, a list of faults in `NodeFault.forms`, for the `nodes:` given.
    private func readNodeFaults(_ pair: (key: String, keyNode: YAMLNode, value: YAMLNode), into scenario: inout ScenarioConfig, _ sink: inout ErrorSink) {
        guard let nodes = scenario.cluster?.nodes else {
            sink.add(at: pair.keyNode.location, "node-faults: needs nodes: (how many nodes share the database)")
            return
        }
        guard case let .sequence(items, _) = pair.value else {
            sink.add(at: pair.value.location, "node-faults: expected a list of faults like [kill:0@40+30, pause:1@90+30], found \(pair.value.foundDescription)")
            return
        }
        var faults: [NodeFault] = []
        for item in items {
            guard let text = item.scalarText, let fault = NodeFault.parse(text, nodes: nodes) else {
                sink.add(at: item.location, "node-faults: expected \(NodeFault.forms), with NODE in 0..<\(nodes), found \(item.foundDescription)")
                continue
            }
            faults.append(fault)
        }
        scenario.cluster?.faults = faults
    }

    /// The scenario's jobs, from a folder or an inline list, and the identifiers that faults and
    /// expectations may name (nil when they cannot be known: the folder did not load).
    private func jobs(_ reader: ValueReader, start: Instant, zone: TimeZone, source: SourceText,
                      _ sink: inout ErrorSink, _ otherFiles: inout [ConfigError]) -> (jobs: [JobConfig], identifiers: [String]?) {
        let forms = "a jobs folder like ../../Jobs (relative to the scenario file) or a list of jobs"
        let expected = "expected \(forms)"
        switch reader.node {
        case .mapping:
            sink.add(at: reader.node.location, "jobs: \(expected), found a mapping (write each job as a list item, after -)")
            return ([], nil)
        case .scalar:
            guard let text = reader.string(&sink, expected: forms) else { return ([], nil) }
            return folder(text, node: reader.node, start: start, zone: zone, &sink, &otherFiles)
        case .sequence(let items, _):
            guard !items.isEmpty else {
                sink.add(at: reader.node.location, "jobs: expected at least one job, found an empty list")
                return ([], [])
            }
            return inline(items, start: start, zone: zone, source: source, &sink)
        }
    }

    private func folder(_ text: String, node: YAMLNode, start: Instant, zone: TimeZone,
                        _ sink: inout ErrorSink, _ otherFiles: inout [ConfigError]) -> (jobs: [JobConfig], identifiers: [String]?) {
        let path = PathText.lexicallyNormalized(text.hasPrefix("/") ? text : PathText.join(Self.directory(of: file), text))
        var isDirectory: ObjCBool = false
        let shown = path == text ? "" : " (\(EchoText.escaped(path, limit: 120)))"
        guard !text.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            sink.add(at: node.location, "jobs: expected a jobs folder, found \(EchoText.quoted(text))\(shown), which does not exist "
                + "(a relative folder is relative to the scenario file)")
            return ([], nil)
        }
        guard isDirectory.boolValue else {
            sink.add(at: node.location, "jobs: expected a jobs folder, found \(EchoText.quoted(text))\(shown), which is a file")
            return ([], nil)
        }
        switch JobDirectory.load(path, searchPath: searchPath, limits: limits, now: start, timeZone: zone, accounts: nil) {
        case .failure(let errors):
            otherFiles += errors.errors
            return ([], nil)
        case .success(let jobs):
            if jobs.isEmpty {
                sink.add(at: node.location, "jobs: expected a folder with at least one job file (*.yaml), "
                    + "found none in \(EchoText.quoted(text))\(shown)")
            }
            return (jobs, jobs.map(\.identifier))
        }
    }

    /// Inline jobs, each read as a job file would be (relative commands resolve against the
    /// scenario file's folder), then checked together as a job folder is.
    private func inline(_ items: [YAMLNode], start: Instant, zone: TimeZone, source: SourceText,
                        _ sink: inout ErrorSink) -> (jobs: [JobConfig], identifiers: [String]?) {
        let parser = JobFileParser(file: file, projectRoot: PathText.projectRoot(of: file), searchPath: searchPath,
                                   now: start, defaultTimeZone: zone)
        var parsed: [JobConfig] = []
        var identities: [JobIdentity] = []
        var identifiers: [String] = []
        for item in items {
            guard case .mapping(let mapping, let location) = item else {
                sink.add(at: item.location, "jobs: expected each job to be a mapping of job settings (identifier:, command:, ...), "
                    + "found \(item.foundDescription)")
                continue
            }
            if let identifier = mapping.first(where: { $0.key.scalarText == "identifier" })?.value.scalarText {
                identifiers.append(identifier)
            }
            // A sink of its own, so one job's misspelt key does not hide another's missing key.
            var jobSink = ErrorSink(file: file)
            let read = parser.job(from: mapping, at: location, source: source, &jobSink)
            if let job = read.job { parsed.append(job) }
            if let identity = read.identity { identities.append(identity) }
            sink.append(contentsOf: jobSink)
        }
        for error in JobSetValidator(limits: limits, scope: "the scenario").validate(identities) {
            sink.add(error.line, error.column, error.message)
        }
        return (parsed, identifiers)
    }

    /// `overnight-downtime` for `Tests/Scenarios/overnight-downtime.yaml`.
    static func defaultName(of file: String) -> String {
        let base = NSString(string: file).lastPathComponent
        for suffix in JobFolder.jobFileSuffixes where base.hasSuffix(suffix) && base.count > suffix.count {
            return String(base.dropLast(suffix.count))
        }
        return base.isEmpty ? file : base
    }

    /// The folder holding `file`: `.` for a bare file name.
    static func directory(of file: String) -> String {
        let parent = NSString(string: file).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}
