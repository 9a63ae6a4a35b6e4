import RefreshdCore

extension JobConfig {
    /// The job as the runtime runs it: its definition, its command (run in the project root) and
    /// how its first request is made. The daemon and the simulator both build their jobs with it,
    /// so they seed and reload by the same rules.
    ///
    /// `earliest: +0s` (the default) leaves the first request to the core (a calendar job's next
    /// slot, any other job now); `+DURATION` is that long after the load; a date is requested
    /// once; a calendar expression is its next elapse after the load.
    package var spec: JobSpec {
        let first: FirstRequest = switch earliest {
        case .relative(.zero): .core
        case let .relative(duration): .after(duration)
        case let .absolute(instant): .at(instant)
        case let .calendar(schedule): .nextSlot(schedule)
        }
        var job = CommandJob(argv: command, environment: environment, workingDirectory: projectRoot)
        job.limits = limits
        job.runAs = runAs
        return JobSpec(definition: definition, command: job,
                       // A timeline template's widget is its instances' (its kind a pattern), not its own.
                       firstRequest: first, widget: parameters == nil ? widget : nil, action: action,
                       template: parameters.map { TemplateSpec(parameters: $0, firstRequest: first, pathParameters: pathParameters,
                                                               widget: widget, stagedKind: stagedKind) },
                       instanceSource: instances.map(InstanceSource.init), notifiers: notifiers)
    }
}
