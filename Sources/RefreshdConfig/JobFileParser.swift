import Foundation
import RefreshdCore

/// Reads one job file's YAML into a `JobConfig`, collecting every problem in the file.
///
/// Parsing goes setting by setting over the composed node tree, so each problem is reported at the
/// value that caused it and the rest of the file is still checked. A file with any error
/// produces no job, but still its `JobIdentity` when the identifier could be read: cross-file
/// rules (unique identifiers, namespace limits) live in `JobSetValidator` and run on every file.
struct JobFileParser {
    /// Every top-level setting, in the order the documentation lists them.
    static let keys = ["identifier", "kind", "command", "action", "stage-playlist", "earliest", "allowance", "grace",
                       "resubmit", "retry", "requires", "namespace", "environment", "limits", "user", "group",
                       "timezone", "missed", "catch-up", "jitter", "fixed-jitter", "accuracy", "widget",
                       "provider", "simulate", "on-failure", "on-recovery", "template", "parameters", "instances"]

    let file: String
    let projectRoot: String
    let searchPath: String?
    /// When the file is loaded: calendar expressions must elapse after it.
    let now: Instant
    /// The zone of calendar expressions in jobs without `timezone:`.
    let defaultTimeZone: TimeZone
    /// When the file was last modified (ns since the epoch), for `JobIdentity.modified`.
    var modified: Int64? = nil
    /// How `user:` and `group:` are checked and resolved (nil: unresolved, for simulation).
    var accounts: Accounts? = nil

    /// The parts of a job file's reading: the job (nil on any error) and what the checks across
    /// files need (nil when even the identifier could not be read).
    struct Reading {
        var job: JobConfig?
        var identity: JobIdentity?
        var errors: [ConfigError] = []
    }

    /// The job, or nil with the errors that prevent it (at most
    /// `JobFileLimits.maximumErrorsPerFile`, then one saying how many more there were).
    func parse(yaml text: String) -> Reading {
        var sink = ErrorSink(file: file)
        // YAML allows a byte-order mark at the start, and Windows editors write one; libyaml
        // reads the text as given (already decoded), so it is dropped here. Locations are
        // unchanged for people: editors do not show it.
        let yaml = SourceText.withoutByteOrderMark(text)
        let size = yaml.utf8.count
        if size > JobFileLimits.maximumFileSize {
            sink.add(at: .start, Self.sizeMessage(bytes: size))
            return Reading(errors: sink.errors)
        }
        // libyaml's events are composed here (`YAMLComposer`): counting values and aliases as they
        // arrive refuses alias bombs before anything walks them. Scalars are read as their
        // source text, so no tag resolution is needed.
        let document: YAMLComposer.Document
        switch YAMLComposer.compose(yaml) {
        case .failure(let failure):
            sink.add(at: failure.location, failure.message)
            return Reading(errors: sink.errors)
        case .success(let composed):
            document = composed
        }
        for problem in document.problems { sink.add(at: problem.location, problem.message) }
        guard let root = document.root, !root.isNullScalar else {
            if document.problems.isEmpty {
                sink.add(at: .start, "expected a mapping of job settings (identifier:, command:, ...), found an empty file")
            }
            return Reading(errors: Self.capped(sink.errors))
        }
        guard case .mapping(let mapping, let mappingLocation) = root else {
            sink.add(at: root.location,
                     "expected a mapping of job settings (identifier:, command:, ...), found \(root.foundDescription)")
            return Reading(errors: Self.capped(sink.errors))
        }
        let read = self.job(from: mapping, at: mappingLocation, source: SourceText(text: yaml), &sink)
        guard sink.errors.isEmpty, let job = read.job else {
            return Reading(identity: read.identity, errors: Self.capped(sink.errors))
        }
        return Reading(job: job, identity: read.identity)
    }

    /// The job whose settings are `mapping` (a job file's root, or an inline job of a scenario
    /// file), reporting every problem into `sink`; the job is nil when there was any, the
    /// identity nil only when the identifier could not be read. `source` is the whole file's text,
    /// to place errors inside values.
    func job(from mapping: [(key: YAMLNode, value: YAMLNode)], at mappingLocation: Location, source: SourceText,
             _ sink: inout ErrorSink) -> (job: JobConfig?, identity: JobIdentity?) {
        let before = sink.errors.count
        var settings = JobSettings(file: file, projectRoot: projectRoot, searchPath: searchPath,
                                   now: now, defaultTimeZone: defaultTimeZone, source: source)
        let pairs = MappingReader.pairs(of: mapping, known: Self.keys, prefix: "", &sink)
        for pair in pairs {
            settings.read(key: pair.key, keyNode: pair.keyNode, value: pair.value, &sink)
        }
        settings.resolveCalendars(&sink)
        settings.resolveWidget(&sink)
        settings.resolveAction(&sink)
        settings.accounts = accounts
        settings.resolveRunAs(&sink)
        settings.checkConsistency(mappingLocation: mappingLocation, &sink)
        settings.template.check(kindLocation: settings.kindLocation, isTimeline: settings.isTimeline,
                                stageNode: settings.stageNode?.value, widgetNode: settings.widgetNode?.value,
                                mappingLocation: mappingLocation,
                                source: source, &sink)
        settings.template.readSource(identifier: settings.identifier?.value, jobFile: file, widgetKind: settings.widget?.kind, &sink)
        if let model = settings.simulate, model.instances != nil || model.failing > 0, !settings.template.isTemplate {
            sink.add(at: settings.simulateLocation ?? mappingLocation, "simulate: instances: and failing: apply only to a "
                + "template; expected template: true beside them, or neither")
        }
        return (sink.errors.count == before ? settings.job() : nil, settings.identity(sink, modified: modified))
    }

    /// `the file is 52,428,800 bytes; expected a job file of at most 1 MiB (1,048,576 bytes)`.
    static func sizeMessage(bytes: Int, kind: FileKind = .job) -> String {
        "the file is \(grouped(bytes)) bytes; expected a \(kind.noun) of at most 1 MiB "
            + "(\(grouped(JobFileLimits.maximumFileSize)) bytes)"
    }

    /// `1048576` as `1,048,576`.
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return result
    }

    /// The first `JobFileLimits.maximumErrorsPerFile` errors in file order, and one more at the
    /// next error's place saying how many were left out.
    static func capped(_ errors: [ConfigError]) -> [ConfigError] {
        let limit = JobFileLimits.maximumErrorsPerFile
        guard errors.count > limit else { return errors }
        let sorted = errors.sorted()
        let next = sorted[limit]
        let more = sorted.count - limit
        return Array(sorted.prefix(limit)) + [ConfigError(
            file: next.file, line: next.line, column: next.column,
            message: "\(more) more error\(more == 1 ? "" : "s") in this file not shown (at most \(limit) are shown per file)")]
    }
}
