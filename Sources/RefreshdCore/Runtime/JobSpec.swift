/// A job as the runtime runs it from config: its definition, its command and how its first
/// request is made. The daemon turns job files into these; the simulator does the same, so both
/// seed and reload by the same rules.
package struct JobSpec: Sendable, Hashable {
    package var definition: TaskDefinition
    package var command: CommandJob
    package var firstRequest: FirstRequest
    /// For a timeline job (`kind: timeline`): its widget. Its provider runs are requested by the
    /// timeline machine, not by `firstRequest`.
    package var widget: WidgetSpec?
    /// A built-in action run instead of the command (`action: stage-playlist`).
    package var action: ActionSpec?
    /// For a template (`template: true`, issue 23): its parameters. Only its instances run.
    package var template: TemplateSpec?
    /// A template's `instances:` file, read: applied as the complete set at each load and
    /// reload. Not part of the job's identity (`InstanceSource` compares equal): a changed list
    /// is a diff of instances, not a changed template.
    package var instanceSource: InstanceSource?
    /// Who is told of its failed runs and its recovery (`on-failure:`, `on-recovery:`).
    package var notifiers = JobNotifiers()

    package init(definition: TaskDefinition, command: CommandJob, firstRequest: FirstRequest = .core,
                widget: WidgetSpec? = nil, action: ActionSpec? = nil, template: TemplateSpec? = nil,
                instanceSource: InstanceSource? = nil, notifiers: JobNotifiers = JobNotifiers()) {
        self.template = template
        self.instanceSource = instanceSource
        self.notifiers = notifiers
        self.definition = definition
        self.command = command
        self.firstRequest = firstRequest
        self.widget = widget
        self.action = action
    }

    package var identifier: String { definition.identifier }

    /// What a run of a job runs: a built-in action (bound to code by the host) or a command.
    package enum Work: Sendable, Hashable {
        case action(ActionSpec)
        case command(CommandJob)

        /// What the machine's launch rule sees of it (`RuntimeMachine.launching`), read without
        /// binding an action to its code.
        package var launchTarget: RuntimeMachine.LaunchTarget {
            switch self {
            case .action: .action
            case let .command(job): .command(runsNothing: job.argv.isEmpty)
            }
        }
    }

    /// What a run of this job runs: its built-in action, else its widget's built-in provider (a
    /// timeline job with `provider: playlist` has no command), else its command.
    package var work: Work {
        if let action { return .action(action) }
        if case let .action(provider)? = widget?.provider { return .action(provider) }
        return .command(command)
    }
}

/// How a job's first request is made when it is loaded and has no pending request.
public enum FirstRequest: Sendable, Hashable {
    /// The core decides: a calendar job's next slot (jittered), any other job now.
    case core
    /// This long after the load.
    case after(Duration)
    /// At this date, once: after it was requested, a restart does not request it again.
    case at(Instant)
    /// The next elapse of this calendar after the load.
    case nextSlot(Schedule)

    /// The text remembered in the state (`seedSpec`), as the job file would write it.
    package var text: String {
        switch self {
        case .core: "+0s"
        case let .after(duration): "+\(duration.compactText)"
        case let .at(instant): instant.iso8601
        case let .nextSlot(schedule): schedule.text
        }
    }

    /// The earliest begin date for a load at `now`; nil for `.core` (the core decides) and for a
    /// calendar with no next slot.
    package func earliest(loadedAt now: Instant) -> Instant? {
        switch self {
        case .core: nil
        case let .after(duration): now + duration
        case let .at(instant): instant
        case let .nextSlot(schedule): schedule.next(after: now)
        }
    }
}
