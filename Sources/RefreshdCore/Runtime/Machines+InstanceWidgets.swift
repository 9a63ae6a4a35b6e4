/// Timeline templates' instances (issue 23): each instance of a template whose `widget.kind`
/// holds placeholders has a widget of its own, with its kind derived from its values
/// (`InstanceKind`), its own timeline, reload budget, stale spans, publications
/// (`widgets/<kind>/<family>.json`) and provider runs (`T[K]#family`, in the namespace
/// `widget.<kind>`). Adding the instance declares them in the same event (one commit);
/// removing it withdraws them (its published files removed, its timeline record deleted; its
/// day counters stay in the history, as a withdrawn widget's do); a restart declares them again
/// before the saved timelines are restored, so nothing of theirs is dropped as undeclared.
extension Machines {
    /// Adds an instance (the core's add, with its checks) and declares its widget, as one
    /// event (the API's and `ctl`'s add). A kind already another widget's is refused before
    /// anything changes.
    ///
    /// - Throws: the core's refusals; `badValues` for a kind already in use.
    package mutating func addInstance(_ record: InstanceRecord, at now: Instant,
                                      into effects: inout [SchedulerEffect]) throws(InstanceError) {
        let start = effects.count
        try addingInstance(record, at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// `addInstance` inside an event being handled (settled by it).
    mutating func addingInstance(_ record: InstanceRecord, at now: Instant,
                                 into effects: inout [SchedulerEffect]) throws(InstanceError) {
        guard let template = widgetTemplates[record.template] else {
            let staged = try stagedKindChecked(record)
            try scheduler.addInstance(record, at: now, into: &effects)
            if let staged { stagedKinds?[staged.slot] = staged.identifier }
            return
        }
        let checked = try SchedulerCore.checked(record, of: template.spec)
        if case let .success(kind)? = template.spec.widgetKind(checked.values),
           let owner = timelines.definitions[kind]?.job, owner != checked.identifier {
            throw .badValues(template: record.template, key: record.key, problem: "its widget kind \(EchoText.quoted(kind, limit: 80)) "
                + "is already \(owner)'s (\(InstanceKind.derivation)); expected values that make a kind of its own")
        }
        try scheduler.addInstance(record, at: now, into: &effects)
        declareInstanceWidget(checked.identifier, checked.values, at: now, into: &effects)
    }

    /// Declares (or redeclares) an instance's widget and its families' provider definitions.
    mutating func declareInstanceWidget(_ identifier: String, _ values: [String: String], at now: Instant,
                                        into effects: inout [SchedulerEffect]) {
        guard let template = InstanceName.split(identifier).flatMap({ widgetTemplates[$0.template] }),
              let widget = template.spec.instanceWidget(values) else { return }
        if let old = instanceWidgets[identifier], old != widget.kind {
            withdrawInstanceWidget(identifier, at: now, into: &effects)
        }
        if let owner = timelines.definitions[widget.kind]?.job, owner != identifier {
            // Said, not silent: at a start, a job file read before the state may hold the kind.
            effects.append(.log(.instance(.widgetTaken(identifier: identifier, kind: widget.kind, owner: owner))))
            return
        }
        var definition = template.definition
        definition.identifier = identifier
        var families: Set<WidgetFamily> = []
        for name in widget.families {
            guard let family = WidgetFamily(rawValue: name) else { continue }
            families.insert(family)
            let provider = widget.providerDefinition(of: definition, family: name)
            scheduler.handle(.declare(provider), at: now, into: &effects)
            providers[provider.identifier] = WidgetID(kind: widget.kind, family: family)
        }
        instanceWidgets[identifier] = widget.kind
        feed(.declare(widget.definition(job: definition, families: families)), at: now, into: &effects)
    }

    /// Withdraws an instance's widget: its providers undeclared (a pending reload cancelled, a
    /// call in flight finishes and is ignored), every family's file removed, its record deleted.
    mutating func withdrawInstanceWidget(_ identifier: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        guard let kind = instanceWidgets.removeValue(forKey: identifier) else { return }
        for family in timelines.definitions[kind]?.sortedFamilies ?? [] {
            let provider = WidgetSpec.providerIdentifier(job: identifier, family: family.rawValue)
            scheduler.handle(.undeclare(identifier: provider), at: now, into: &effects)
            providers[provider] = nil
        }
        feed(.undeclare(kind: kind), at: now, into: &effects)
    }

    /// After a removal: the widget of an instance that is gone.
    mutating func withdrawRemovedInstanceWidget(_ identifier: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        guard instanceWidgets[identifier] != nil, scheduler.instance(identifier) == nil else { return }
        withdrawInstanceWidget(identifier, at: now, into: &effects)
    }

    /// A timeline template (re)declared: the widgets of its instances known so far follow its
    /// widget (a family no longer listed withdrawn, a kind pattern changed moves each widget to
    /// its new kind); a template that no longer has a widget withdraws them.
    mutating func templateDeclared(_ definition: TaskDefinition, _ spec: TemplateSpec, at now: Instant,
                                   into effects: inout [SchedulerEffect]) {
        let identifier = definition.identifier
        let old = widgetTemplates[identifier]?.spec.widget
        widgetTemplates[identifier] = spec.widget != nil ? (definition, spec) : nil
        for record in scheduler.instances(of: identifier) ?? [] {
            let instance = record.identifier
            guard let widget = spec.widget else {
                withdrawInstanceWidget(instance, at: now, into: &effects)
                continue
            }
            if let old, instanceWidgets[instance] != nil {
                for name in old.families where !widget.families.contains(name) {
                    let provider = WidgetSpec.providerIdentifier(job: instance, family: name)
                    scheduler.handle(.undeclare(identifier: provider), at: now, into: &effects)
                    providers[provider] = nil
                }
            }
            declareInstanceWidget(instance, spec.values(of: record), at: now, into: &effects)
        }
    }

    /// A timeline template withdrawn (its file removed): its instances stay, their widgets go
    /// (declared again when the template comes back).
    mutating func templateWithdrawn(_ identifier: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        for record in scheduler.instances(of: identifier) ?? [] {
            withdrawInstanceWidget(record.identifier, at: now, into: &effects)
        }
        widgetTemplates[identifier] = nil
    }

    /// At a restore: the saved instances' widgets, declared before the saved timelines return.
    mutating func declareRestoredInstanceWidgets(_ records: [InstanceRecord], at now: Instant,
                                                 into effects: inout [SchedulerEffect]) {
        for record in records {
            guard let template = widgetTemplates[record.template] else { continue }
            declareInstanceWidget(record.identifier, template.spec.values(of: record), at: now, into: &effects)
        }
    }
}
