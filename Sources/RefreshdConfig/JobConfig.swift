import RefreshdCore

/// One validated job file: the task definition the scheduler core needs, plus what the shell
/// needs to launch the job's command.
///
/// Produced only by `JobDirectory.load` and `JobDirectory.parse`, after every setting has been
/// checked, so a `JobConfig` can be trusted: its command exists and is executable, its durations
/// are positive where they must be, and its kind's requirements are consistent.
package struct JobConfig: Sendable, Hashable {
    /// The identifier, kind, namespace, allowance, grace, resubmit and retry rules.
    package var definition: TaskDefinition
    /// The argument vector; `command[0]` is resolved to an absolute (or project-relative) path.
    package var command: [String]
    /// Extra environment variables for the command, on top of the daemon's own.
    package var environment: [String: String]
    /// When the first request after loading may begin.
    package var earliest: EarliestSpec
    /// The job file's path, as given to the loader or joined from the directory and the file name.
    package var file: String
    /// The line of the `identifier:` setting (1-based), for messages that point at the job.
    package var line: Int
    /// The job folder's parent: relative commands resolve against it and it is the working directory.
    package var projectRoot: String
    /// How the job behaves in `refreshd simulate` and scenario tests (its `simulate:` block);
    /// nil without one (a quick success). `refreshd run` ignores it.
    package var simulate: JobModel?
    /// For `kind: timeline`: the widget it provides timelines for.
    package var widget: WidgetSpec?
    /// A built-in action run instead of a command (`action: stage-playlist`); `command` is then empty.
    package var action: ActionSpec?
    /// For a template (`template: true`): its parameter names, in the file's order. Only its
    /// instances run; `{name}` in its arguments and environment values are theirs.
    package var parameters: [String]?
    /// A template's `instances: FILE`, read: the complete list of its instances.
    package var instances: [InstanceRecord]?
    /// A template's parameters that `stage-playlist:`'s `library` or `folder` hold.
    package var pathParameters: [String]
    /// Who is told of its failed runs and of its recovery (`on-failure:`, `on-recovery:`).
    package var notifiers: JobNotifiers
    /// A staging template's `stage-playlist.widget` holding placeholders (`TemplateSpec.stagedKind`).
    package var stagedKind: String?
    /// What each run of its command may use (`limits:`, issue 35).
    package var limits = JobLimits()
    /// Who its command runs as (`user:` and `group:`, issue 35); nil: refreshd's own user.
    package var runAs: RunAs?
    /// Where `widget.kind`'s value is (line, column), for errors found later about the kind
    /// (a reload whose plain widget would take an instance's kind).
    var widgetKindLocation: Location?

    package init(definition: TaskDefinition, command: [String], environment: [String: String] = [:],
                earliest: EarliestSpec = .relative(.zero), file: String, line: Int, projectRoot: String,
                simulate: JobModel? = nil, widget: WidgetSpec? = nil, action: ActionSpec? = nil,
                parameters: [String]? = nil, instances: [InstanceRecord]? = nil,
                notifiers: JobNotifiers = JobNotifiers(), pathParameters: [String] = [], stagedKind: String? = nil) {
        self.pathParameters = pathParameters
        self.stagedKind = stagedKind
        self.parameters = parameters
        self.instances = instances
        self.notifiers = notifiers
        self.definition = definition
        self.command = command
        self.environment = environment
        self.earliest = earliest
        self.file = file
        self.line = line
        self.projectRoot = projectRoot
        self.simulate = simulate
        self.widget = widget
        self.action = action
    }

    /// An error about the job's `widget.kind`, at its value (at the identifier for a job read
    /// without one).
    package func widgetKindError(_ message: String) -> ConfigError {
        let at = widgetKindLocation ?? Location(line: line, column: 1)
        return ConfigError(file: file, line: at.line, column: at.column, message: "widget.kind: " + message)
    }

    /// The job's identifier (shorthand for `definition.identifier`).
    package var identifier: String { definition.identifier }
}

/// What the checks across job files need of one job: read as soon as its identifier is, even
/// when the file has other errors, so duplicate identifiers and namespace clashes are reported in
/// the same pass as each file's own errors.
struct JobIdentity: Sendable {
    var identifier: String
    /// Where the identifier's value is.
    var identifierLocation: Location
    /// The job's kind; nil when `kind:` is invalid or misspelt (then no namespace limit is checked).
    var kind: TaskKind?
    /// Where the `kind:` value is, when the file names one.
    var kindLocation: Location?
    /// The namespace counted against (`namespace:`, else the identifier's app prefix); nil when
    /// `namespace:` is invalid or misspelt.
    var namespace: String?
    /// True when the namespace comes from the identifier, not from `namespace:`.
    var namespaceIsDerived: Bool
    var file: String
    /// When the file was last modified (nanoseconds since the epoch); nil for a scenario's
    /// inline jobs. In a namespace clash the most recently modified file is the one refused.
    var modified: Int64?

    /// The line of the identifier, as `JobConfig.line`.
    var line: Int { identifierLocation.line }
    /// Where an error about the job's kind (namespace limits) belongs.
    var kindOrIdentifierLocation: Location { kindLocation ?? identifierLocation }
}
