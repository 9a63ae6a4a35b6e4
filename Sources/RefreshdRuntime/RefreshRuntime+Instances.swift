import RefreshdCore

/// Templates and instances (issue 23) in the engine: declaring a template (from a job file, or
/// with a handler through the library API), adding, removing and listing instances. Every
/// decision is the core's (`SchedulerCore+Instances`); this binds the code a run of an instance
/// executes: the template's, with its placeholders filled with the instance's values.
extension RefreshRuntime {
    /// Declares a template with its handler (the library API; a job file's template is declared
    /// by `load`/`reload`). A `.command` handler's arguments and environment values may hold
    /// `{name}` placeholders, filled per instance at each launch; an in-process handler reads
    /// the instance from its task's identifier (`InstanceName.split`). Instances already known
    /// (restored, or kept while the template was withdrawn) are declared with it.
    package func declareTemplate(_ definition: TaskDefinition, parameters: [String],
                                firstRequest: FirstRequest = .core, handler: TaskHandler) {
        lock.withLock {
            handlers[definition.identifier] = handler
            performLocked(.event(.declareTemplate(definition, TemplateSpec(parameters: parameters, firstRequest: firstRequest))))
        }
        kick()
    }

    /// A job file's template: declared with its spec (the handler is made per launch from it).
    func declareTemplate(_ spec: JobSpec) {
        guard let template = spec.template else { return }
        perform(.event(.declareTemplate(spec.definition, template)))
    }

    /// Withdraws a template: its instances' requests are cancelled; the instances are kept.
    package func withdrawTemplate(_ identifier: String) {
        lock.withLock {
            performLocked(.event(.undeclareTemplate(identifier: identifier)))
            handlers[identifier] = nil
        }
        kick()
    }

    /// Gives a template's instances their first request (those without one, or every one when
    /// `replacing`), in one transaction.
    func seedInstances(of template: String, replacing: Bool) {
        perform(.event(.seedInstances(template: template, replacing: replacing)))
    }

    /// Adds an instance of a declared template (`values` by parameter name; with one parameter
    /// they may be left out: the value is the key) and gives it its first request, committed
    /// before this returns. Adding an existing instance keeps its request, backoff and streak.
    ///
    /// - Throws: the core's refusal (`unknownTemplate`, `badKey`, `badValues`, `stopping`), or
    ///   `notSaved` when the commit failed (the runtime stops).
    package func addInstance(template: String, key: String, values: [String: String] = [:]) throws(InstanceError) {
        try perform(.addInstance(InstanceRecord(template: template, key: key, values: values))).instance()
    }

    /// Adds many instances in one commit (one transaction: a million adds are one fsync, not a
    /// million) and one wake of the loop; each is checked and added as `addInstance` does.
    /// Returns the refused ones with why (nothing of them changed); the others are committed
    /// before this returns. If the commit fails, every record comes back `notSaved`.
    package func addInstances(_ records: [InstanceRecord]) -> [(record: InstanceRecord, error: InstanceError)] {
        let performed = perform(.addInstances(records))
        if let notSaved = performed.notSaved { return records.map { ($0, .notSaved(reason: notSaved)) } }
        if case let .instancesRefused(refused) = performed.reply { return refused }
        return []
    }

    /// Removes an instance: its pending request is cancelled, its live activities end, its
    /// retry streak and record are deleted; a run in flight finishes. Its history stays.
    ///
    /// - Throws: `unknownTemplate`, `unknownInstance`, or `notSaved`.
    package func removeInstance(template: String, key: String) throws(InstanceError) {
        try perform(.removeInstance(template: template, key: key)).instance()
    }

    /// The instances of a template, in the order first added; nil when no template of that
    /// identifier is known.
    package func instances(of template: String) -> [InstanceRecord]? {
        lock.withLock {
            startIfNeeded()
            return machines.scheduler.instances(of: template)
        }
    }

    /// The instance an identifier names (`template[key]`), if it is one.
    package func instance(_ identifier: String) -> InstanceRecord? {
        lock.withLock { machines.scheduler.instance(identifier) }
    }

    /// The plain timeline jobs of a config about to be applied whose widget kind an instance of
    /// one of its timeline templates has (`InstanceKind.clashes`), with the instances known now
    /// (a template's `instances:` list stands for its set). A reload with any is refused whole
    /// by the daemon, as a config with an invalid job is; nothing is checked without a plain
    /// timeline job.
    ///
    /// Before the saved state is restored (a start), the instances are the saved ones: an
    /// instance added at run time (by `ctl`, the API or a sync job) is in the state, not in the
    /// files, and the start refuses a job taking its kind as a reload does.
    package func instanceKindClashes(_ specs: [JobSpec]) -> [InstanceKind.Clash] {
        lock.withLock {
            if let restored, !restored.instances.isEmpty {
                let saved = Dictionary(grouping: restored.instances, by: \.template)
                return InstanceKind.clashes(specs) { saved[$0.identifier] ?? [] }
            }
            return InstanceKind.clashes(specs) { machines.scheduler.instances(of: $0.identifier) ?? [] }
        }
    }

    /// Each instance's widget kind and its template (timeline templates' instances), for
    /// folding per-widget figures per template (`ReloadStats.folding`).
    package func instanceWidgetTemplates() -> [String: String] {
        lock.withLock {
            var templates: [String: String] = [:]
            for (identifier, kind) in machines.instanceWidgets {
                if let split = InstanceName.split(identifier) { templates[kind] = split.template }
            }
            return templates
        }
    }

    /// Applies instance lines another shard's sync run sent this one (a cluster command).
    package func applyInstanceLines(_ lines: [InstanceLines]) { perform(.instanceLines(lines)) }

    /// Applies a template's `instances:` file as its complete set, in one transaction.
    func applyInstanceSource(_ spec: JobSpec) {
        guard let source = spec.instanceSource, spec.template != nil else { return }
        perform(.setInstances(template: spec.identifier, source.records))
    }

    /// What a launch of an instance runs: its template's work with its values filled (a job
    /// file's template: pure, bound only once the machine lets it start, since binding a built-in
    /// action may prepare its paths), or the code an embedder declared the template with.
    enum InstanceWork {
        case work(JobSpec.Work)
        case handler(TaskHandler?)

        var launchTarget: RuntimeMachine.LaunchTarget? {
            switch self {
            case let .work(work): work.launchTarget
            case let .handler(handler): handler?.launchTarget
            }
        }
    }

    /// Under `lock`: what a launch of an instance runs (nil: the identifier is no instance), the
    /// instance looked up once. An instance's widget's provider run (`T[K]#family`) runs its
    /// template's provider, told the instance's kind and family (`WidgetSpec.providerCommand`);
    /// nothing per instance is registered. Whether it may start (a value kept from before its
    /// template put a parameter in a path) is the machine's (`RuntimeMachine.launching`).
    /// `slot` is the order's slot in the core's definitions table (-1: found by name).
    func instanceLaunch(_ identifier: String, slot: SlotHint = .none) -> InstanceWork? {
        if !machines.instanceWidgets.isEmpty, let id = machines.providers[identifier] {
            guard let hash = identifier.utf8.lastIndex(of: UInt8(ascii: "#")),
                  let record = machines.scheduler.instance(String(identifier[..<hash])),
                  let spec = jobs[record.template], let template = spec.template,
                  var widget = template.widget else { return .handler(nil) }
            widget.kind = id.kind
            switch widget.provider {
            case .command:
                let command = spec.command.filled(record.values)
                return .work(.command(widget.providerCommand(command, family: id.family.rawValue,
                                                             sharedContainer: options.sharedContainer)))
            case let .action(action):
                return .work(.action(action.filled(record.values)))
            }
        }
        guard let record = machines.scheduler.instance(at: slot.raw, identifier) else { return nil }
        if let spec = jobs[record.template], spec.template != nil { return .work(spec.filled(record.values).work) }
        switch handlers[record.template] {
        case let .command(job)?: return .handler(.command(job.filled(record.values)))
        case let other: return .handler(other)
        }
    }

}
