/// The templates the core knows and their instances, by the definitions' identifier slots.
///
/// An instance is an identifier `template[key]` declared with its template's rules (the index of
/// the rules in `TaskDefinitions.rules`: 4 bytes, no `TaskDefinition` of its own); what is its
/// own is here: its template (4 bytes a slot) and, only when the template has several
/// parameters, its values. Its request, retry streak, counters and runs are the scheduler's, by
/// identifier, like any job's. Instances of a template that is not declared (its file withdrawn,
/// or not loaded yet at a restore) are kept, undeclared: they come back with their template.
struct InstanceRegistry: Sendable {
    struct Template: Sendable {
        var identifier: String
        var spec: TemplateSpec
        /// Nil while the template is not declared.
        var definition: TaskDefinition?
        var rule: Int32 = -1
        var count = 0
    }

    var templates: [Template] = []
    var templateIndex: [String: Int32] = [:]
    /// Per identifier slot: the index of the template of the instance there, or -1.
    var templateBySlot: ContiguousArray<Int32> = []
    /// The values of instances of templates with several parameters, by slot (one parameter:
    /// the value is the key, stored once, in the identifier).
    var values: [Int32: [String: String]] = [:]

    var isEmpty: Bool { templates.isEmpty }

    func template(at slot: Int32) -> Int32 {
        Int(slot) < templateBySlot.count ? templateBySlot[Int(slot)] : -1
    }

    mutating func setTemplate(_ index: Int32, at slot: Int32) {
        while templateBySlot.count <= Int(slot) { templateBySlot.append(-1) }
        templateBySlot[Int(slot)] = index
    }

    /// The index of a template, registering it (undeclared) if unknown.
    mutating func index(of template: String, spec: TemplateSpec? = nil) -> Int32 {
        if let known = templateIndex[template] { return known }
        let index = Int32(templates.count)
        templates.append(Template(identifier: template, spec: spec ?? TemplateSpec(parameters: [])))
        templateIndex[template] = index
        return index
    }
}

extension SchedulerCore {
    // MARK: Queries

    /// Whether `identifier` names a template (declared now).
    package func isTemplate(_ identifier: String) -> Bool {
        instances.templateIndex[identifier].map { instances.templates[Int($0)].definition != nil } ?? false
    }

    /// The declared templates' identifiers and parameters, in the order first declared.
    package var templates: [(identifier: String, parameters: [String], instances: Int)] {
        instances.templates.filter { $0.definition != nil }.map { ($0.identifier, $0.spec.parameters, $0.count) }
    }

    /// The instances of a template, in the order first added (nil: no such template).
    package func instances(of template: String) -> [InstanceRecord]? {
        guard let index = instances.templateIndex[template] else { return nil }
        var found: [InstanceRecord] = []
        for (slot, t) in instances.templateBySlot.enumerated() where t == index {
            found.append(record(at: Int32(slot), template: instances.templates[Int(index)]))
        }
        return found
    }

    /// The instance an identifier names, if it is one.
    package func instance(_ identifier: String) -> InstanceRecord? {
        guard !instances.isEmpty, let slot = definitions.table.slot(of: identifier) else { return nil }
        let t = instances.template(at: slot)
        guard t >= 0 else { return nil }
        return record(at: slot, template: instances.templates[Int(t)])
    }

    /// `instance(_:)` by the identifier's slot in the definitions' table (`LaunchOrder.slot`),
    /// by name when the slot is unknown (-1).
    package func instance(at slot: Int32, _ identifier: String) -> InstanceRecord? {
        guard slot >= 0 else { return instance(identifier) }
        guard !instances.isEmpty, Int(slot) < definitions.table.count else { return nil }
        let t = instances.template(at: slot)
        guard t >= 0 else { return nil }
        return record(at: slot, template: instances.templates[Int(t)])
    }

    /// Whether any template or instance is known (a launch's instance check costs nothing without).
    package var holdsInstances: Bool { !instances.isEmpty }

    /// Why a run of the instance at `slot` (by name when -1) cannot start: a value kept from
    /// before its template put a parameter in a path (`TemplateSpec.pathProblem`); nil for
    /// one that can, or for no instance. Values are checked when an instance is added; this
    /// is the check of one kept from before, at each launch.
    package func launchProblem(at slot: Int32, _ identifier: String) -> String? {
        guard !instances.isEmpty, let record = instance(at: slot, identifier),
              let index = instances.templateIndex[record.template] else { return nil }
        return instances.templates[Int(index)].spec.pathProblem(record.values)
    }

    /// How many instances a template has.
    package func instanceCount(of template: String) -> Int {
        instances.templateIndex[template].map { instances.templates[Int($0)].count } ?? 0
    }

    private func record(at slot: Int32, template: InstanceRegistry.Template) -> InstanceRecord {
        let key = definitions.table.key(at: slot) ?? {
            let identifier = definitions.table[Int(slot)]  // a plain name of an instance's shape
            return String(decoding: identifier.utf8.dropFirst(template.identifier.utf8.count + 1).dropLast(), as: UTF8.self)
        }()
        let values = instances.values[slot] ?? template.spec.parameters.first.map { [$0: key] } ?? [:]
        return InstanceRecord(template: template.identifier, key: key, values: values)
    }

    /// Whether a request's identifier is an instance's (exempt from the namespace's pending limit:
    /// its template bounds it, one request per instance).
    func isInstance(_ identifier: String) -> Bool {
        guard !instances.isEmpty, let slot = definitions.table.slot(of: identifier) else { return false }
        return instances.template(at: slot) >= 0
    }

    /// `isInstance`, read by the queue slot when one is given and the queue shares the
    /// definitions' table (their slots agree): nothing hashed.
    func isInstance(_ identifier: String, queueSlot: Int32?) -> Bool {
        guard !instances.isEmpty else { return false }
        if let queueSlot, queue.ids.sharesNames(with: definitions.table) {
            return instances.template(at: queueSlot) >= 0
        }
        return isInstance(identifier)
    }

    // MARK: Templates

    /// Declares (or redeclares) a template: its instances known so far are declared with its
    /// rules. The template's own identifier is not declared: only instances run.
    mutating func declareTemplate(_ definition: TaskDefinition, _ spec: TemplateSpec) {
        let index = instances.index(of: definition.identifier, spec: spec)
        let rule = definitions.ruleIndex(of: definition)
        instances.templates[Int(index)].spec = spec
        instances.templates[Int(index)].definition = definition
        instances.templates[Int(index)].rule = rule
        for (slot, t) in instances.templateBySlot.enumerated() where t == index {
            definitions.declare(slot: Int32(slot), rule: rule)
        }
    }

    /// Withdraws a template: every instance's pending request is cancelled and the instances
    /// are undeclared (their runs in flight finish, nothing follows them). The instances
    /// themselves are kept (in the store too): they come back with the template.
    mutating func undeclareTemplate(_ identifier: String, into effects: inout [SchedulerEffect]) {
        guard let index = instances.templateIndex[identifier],
              instances.templates[Int(index)].definition != nil else { return }
        for (slot, t) in instances.templateBySlot.enumerated() where t == index {
            cancel(definitions.table[slot], into: &effects)
            definitions.undeclare(slot: Int32(slot))
        }
        instances.templates[Int(index)].definition = nil
    }

    // MARK: Instances

    /// Adds an instance and gives it its first request (the template's `earliest:`). Adding one
    /// that exists keeps its request, backoff and retry streak; new values replace its old ones.
    ///
    /// - Throws: `unknownTemplate`, `badKey`, `badValues`, `stopping`; nothing changed then.
    package mutating func addInstance(_ record: InstanceRecord, at now: Instant,
                                     into effects: inout [SchedulerEffect]) throws(InstanceError) {
        guard !isStopping else { throw .stopping }
        guard let index = instances.templateIndex[record.template],
              let definition = instances.templates[Int(index)].definition else {
            throw .unknownTemplate(record.template)
        }
        let template = instances.templates[Int(index)]
        // Checked without building the one-parameter values (a dictionary an add) unless a store
        // or the log wants the record.
        let several = template.spec.parameters.count > 1
        let record = several ? try Self.checked(record, of: template.spec)
            : try Self.checkedSingle(record, template: template.spec)
        let existing = definitions.table.slot(template: record.template, key: record.key)
        if let slot = existing, instances.template(at: slot) == index {
            let updated = several && instances.values[slot] != record.values
            if updated {
                instances.values[slot] = record.values
                persist(.saveInstance(record), into: &effects)
            }
            logRoutine(.instance(.kept(identifier: record.identifier, updated: updated)), into: &effects)
            finishEvent(into: &effects)
            return
        }
        let slot = storeInstance(template: record.template, key: record.key, rule: template.rule, existing: existing)
        instances.setTemplate(index, at: slot)
        if several { instances.values[slot] = record.values }
        instances.templates[Int(index)].count += 1
        let parameters = template.spec.parameters
        persist(.saveInstance(several ? record : Self.withSingleValue(record, parameters)), into: &effects)
        logRoutine(.instance(.added(identifier: record.identifier)), into: &effects)
        // A timeline template's instance runs only its widget's providers (`Machines`).
        if template.spec.widget == nil {
            firstRequest(slot: slot, template: definition, template.spec.firstRequest, at: now, into: &effects)
        }
        finishEvent(into: &effects)
    }

    /// Removes an instance: its pending request is cancelled, its retry streak forgotten, its
    /// record deleted; a run in flight finishes and nothing follows it. Its history (runs,
    /// counters) stays. (Its live activities are ended by `Machines`, which owns them.)
    ///
    /// - Throws: `unknownTemplate` (no template of that name was ever known), `unknownInstance`.
    package mutating func removeInstance(template: String, key: String, at now: Instant,
                                        into effects: inout [SchedulerEffect]) throws(InstanceError) {
        guard let index = instances.templateIndex[template] else { throw .unknownTemplate(template) }
        let identifier = InstanceName.identifier(template: template, key: key)
        guard let slot = definitions.table.slot(of: identifier), instances.template(at: slot) == index else {
            throw .unknownInstance(template: template, key: key)
        }
        let cancelled = removePending(identifier) != nil
        if cancelled {
            persist(.deletePending(identifier: identifier), into: &effects)
            effects.append(.log(.cancelled(identifier: identifier)))
        }
        if failureStreaks.removeValue(forKey: identifier) != nil {
            persist(.failureStreak(identifier: identifier, count: 0), into: &effects)
        }
        persist(.deleteInstance(template: template, key: key), into: &effects)
        definitions.undeclare(slot: slot)
        instances.setTemplate(-1, at: slot)
        instances.values[slot] = nil
        instances.templates[Int(index)].count -= 1
        effects.append(.log(.instance(.removed(identifier: identifier, cancelled: cancelled,
                                               running: activeByIdentifier[identifier]))))
        finishEvent(into: &effects)
    }

    /// Throws what `removeInstance` would refuse, changing nothing (the runtime checks before it
    /// feeds the event, so `Machines` also ends the instance's activities).
    package func checkRemoval(template: String, key: String) throws(InstanceError) {
        guard let index = instances.templateIndex[template] else { throw .unknownTemplate(template) }
        let identifier = InstanceName.identifier(template: template, key: key)
        guard let slot = definitions.table.slot(of: identifier), instances.template(at: slot) == index else {
            throw .unknownInstance(template: template, key: key)
        }
    }

    /// Gives the instances of a template their first request: each without a pending request or
    /// a run in flight, or (`replacing`: its template changed) every one.
    mutating func seedInstances(of template: String, replacing: Bool, at now: Instant,
                                into effects: inout [SchedulerEffect]) {
        guard !isStopping, let index = instances.templateIndex[template],
              let definition = instances.templates[Int(index)].definition,
              instances.templates[Int(index)].spec.widget == nil else { return }
        let first = instances.templates[Int(index)].spec.firstRequest
        for (slot, t) in instances.templateBySlot.enumerated() where t == index {
            let identifier = definitions.table[slot]
            if !replacing, queue[identifier] != nil || activeByIdentifier[identifier] != nil { continue }
            var instanceDefinition = definition
            instanceDefinition.identifier = identifier
            firstRequest(instanceDefinition, first, at: now, into: &effects)
        }
        finishEvent(into: &effects)
    }

    /// An instance's record as saved (`restore`): known again, declared if its template is.
    /// `new`: it cannot have a slot yet (see `IdentifierTable.holdsNoInstanceNames`), so it is not
    /// looked up: at a million instances each probe of the index is a cache miss.
    mutating func restoreInstance(_ record: InstanceRecord, new: Bool = false) {
        let index = instances.index(of: record.template)
        let existing = new ? nil : definitions.table.slot(template: record.template, key: record.key)
        if let slot = existing, instances.template(at: slot) == index { return }
        let template = instances.templates[Int(index)]
        let slot = storeInstance(template: record.template, key: record.key,
                                 rule: template.definition != nil ? template.rule : nil, existing: existing)
        instances.setTemplate(index, at: slot)
        if record.values.count > 1 { instances.values[slot] = record.values }
        instances.templates[Int(index)].count += 1
    }

    /// `checked` for a template of one parameter, leaving the values as given (`withSingleValue`
    /// fills them): the same refusals, no dictionary built.
    static func checkedSingle(_ record: InstanceRecord, template: TemplateSpec) throws(InstanceError) -> InstanceRecord {
        guard template.parameters.count == 1, record.values.isEmpty, InstanceName.isValidKey(record.key),
              template.pathParameters.isEmpty || record.key.utf8.first != UInt8(ascii: "."), template.widget == nil,
              template.stagedKind == nil else {
            return try checked(record, of: template)
        }
        return record
    }

    /// The record with its one parameter's value, the key (as `checked` makes it).
    package static func withSingleValue(_ record: InstanceRecord, _ parameters: [String]) -> InstanceRecord {
        guard parameters.count == 1 else { return record }
        var record = record
        record.values = [parameters[0]: record.key]
        return record
    }

    /// The checked record: a valid key, and values naming exactly the parameters (one
    /// parameter: its value is the key, given or not), each fit for the paths it is filled into.
    static func checked(_ record: InstanceRecord, of template: TemplateSpec) throws(InstanceError) -> InstanceRecord {
        let record = try checked(record, parameters: template.parameters)
        if let problem = template.pathProblem(record.values) {
            throw .badValues(template: record.template, key: record.key, problem: problem)
        }
        return record
    }

    static func checked(_ record: InstanceRecord, parameters: [String]) throws(InstanceError) -> InstanceRecord {
        if let problem = InstanceName.keyProblem(record.key) {
            throw .badKey(template: record.template, key: record.key, problem: problem)
        }
        var record = record
        if parameters.count == 1 {
            let name = parameters[0]
            if let value = record.values[name], value != record.key {
                throw .badValues(template: record.template, key: record.key,
                                 problem: "with one parameter (\(name)) its value is the key; expected \(name)=\(record.key) or no value")
            }
            if let other = record.values.keys.first(where: { $0 != name }) {
                throw .badValues(template: record.template, key: record.key,
                                 problem: "unknown parameter \(EchoText.quoted(other, limit: 80)); expected \(name)")
            }
            record.values = [name: record.key]
            return record
        }
        if let other = record.values.keys.sorted().first(where: { !parameters.contains($0) }) {
            throw .badValues(template: record.template, key: record.key,
                             problem: "unknown parameter \(EchoText.quoted(other, limit: 80)); expected \(parameters.joined(separator: ", "))")
        }
        let missing = parameters.filter { record.values[$0] == nil }
        if !missing.isEmpty {
            throw .badValues(template: record.template, key: record.key,
                             problem: "no value for \(missing.joined(separator: ", ")); expected a value for every parameter (\(parameters.joined(separator: ", ")))")
        }
        for name in parameters {
            let value = record.values[name]!
            if let problem = InstanceName.keyProblem(value, what: "value") {
                throw .badValues(template: record.template, key: record.key, problem: "\(name): " + problem)
            }
        }
        return record
    }

    // MARK: Helpers

    /// Declares instance `template[key]` with the rules at `rule` (nil: only a slot, its
    /// template not declared), in the table the queue shares (see `store`).
    /// `existing`: what `slot(template:key:)` just answered (its slot, or none), not looked up again.
    private mutating func storeInstance(template: String, key: String, rule: Int32?, existing: Int32?) -> Int32 {
        let shared = queue.ids.sharesNames(with: definitions.table)
        if shared { queue.releaseIdentifiers() }
        let slot = definitions.declareInstance(template: template, key: key, rule: rule, existing: .some(existing))
        if shared { queue.adopt(definitions.table) } else { queue.intern(definitions.table[Int(slot)]) }
        return slot
    }

    /// Room for `more` instances in the tables (a batch of adds or a restore).
    package mutating func reserveInstances(_ more: Int) {
        let shared = queue.ids.sharesNames(with: definitions.table)
        if shared { queue.releaseIdentifiers() }
        definitions.reserve(instances: more)
        instances.templateBySlot.reserveCapacity(definitions.table.count + more)
        if shared { queue.adopt(definitions.table) }
        queue.reserve(more)
    }

    /// An instance's first request, by its slot: `firstRequest` without the instance's own
    /// `TaskDefinition` (its template's rules serve) or a hash of its name. Its name is built
    /// only where it is needed: a jitter, a store, a log line, or an entry held elsewhere.
    private mutating func firstRequest(slot: Int32, template definition: TaskDefinition, _ first: FirstRequest,
                                       at now: Instant, into effects: inout [SchedulerEffect]) {
        let bySlot = queue.ids.sharesNames(with: definitions.table) && queue.record(at: slot) == nil
            && waitingOnConditions.isEmpty && blockedByRun.isEmpty && held.isEmpty && parked.isEmpty
        let jittered: Bool
        if case .core = first { jittered = definition.schedule != nil } else { jittered = false }
        guard bySlot, !jittered else {
            var instanceDefinition = definition
            instanceDefinition.identifier = definitions.table[Int(slot)]
            firstRequest(instanceDefinition, first, at: now, into: &effects)
            return
        }
        let earliest: Instant
        if case .core = first {
            earliest = now
        } else {
            guard let date = first.earliest(loadedAt: now) else { return }
            earliest = date
        }
        let processing = definition.kind == .processing
        let sequence = nextSequence
        nextSequence += 1
        queue.insert(slot: slot, namespace: definition.namespace, kind: definition.kind, earliest: earliest, submitted: now,
                     sequence: sequence, power: processing && definition.requiresExternalPower,
                     network: processing && definition.requiresNetworkConnectivity, origin: .submitted,
                     wake: (earliest + max(.zero, definition.accuracy)).milliseconds)
        if configuration.emitsStateChanges || configuration.emitsRoutineLogs, let request = queue.request(at: slot) {
            persist(.savePending(request), into: &effects)
            logRoutine(.submitted(request, replaced: false), into: &effects)
        }
    }

    /// The first request of an instance, as `FirstRequest` says (`.core`: the next slot of its
    /// schedule, jittered, or now). Instances are exempt from the namespace limit, so it cannot
    /// be refused for that; it is logged like any submit.
    private mutating func firstRequest(_ definition: TaskDefinition, _ first: FirstRequest, at now: Instant,
                                       into effects: inout [SchedulerEffect]) {
        let earliest: Instant
        switch first {
        case .core:
            if let schedule = definition.schedule {
                guard let slot = schedule.next(after: now) else { return }
                earliest = slot + jitter(definition, slot: slot)
            } else {
                earliest = now
            }
        default:
            guard let date = first.earliest(loadedAt: now) else { return }
            earliest = date
        }
        enqueueLogged(makePending(definition, earliest: earliest, at: now, origin: .submitted), into: &effects)
    }
}

