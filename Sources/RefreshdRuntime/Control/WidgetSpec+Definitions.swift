import RefreshdCore

extension WidgetSpec {
    /// The widgets `jobs` declare, and those of `instances` of their timeline templates (each
    /// with its instance as its job, so that they fold per template), as the runtime declares
    /// them (`definition(job:families:)`): for the answers read from a store.
    package static func definitions(of jobs: [JobSpec], instances: [InstanceRecord] = []) -> [WidgetDefinition] {
        func families(_ widget: WidgetSpec) -> Set<WidgetFamily> { Set(widget.families.compactMap(WidgetFamily.init(rawValue:))) }
        var definitions = jobs.compactMap { spec in
            spec.template == nil ? spec.widget.map { $0.definition(job: spec.definition, families: families($0)) } : nil
        }
        guard !instances.isEmpty else { return definitions }
        let templates = Dictionary(jobs.compactMap { spec in spec.template?.widget != nil ? (spec.identifier, spec) : nil },
                                   uniquingKeysWith: { first, _ in first })
        for record in instances {
            guard let spec = templates[record.template], let template = spec.template,
                  let widget = template.instanceWidget(template.values(of: record)) else { continue }
            var job = spec.definition
            job.identifier = record.identifier
            definitions.append(widget.definition(job: job, families: families(widget)))
        }
        return definitions
    }
}
