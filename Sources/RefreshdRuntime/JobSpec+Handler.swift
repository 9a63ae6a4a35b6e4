import RefreshdCore

extension JobSpec {
    /// What runs when the job launches (`work`, the rule), with `actions` supplying the code of
    /// built-in actions (see `ActionBinding`).
    package func handler(actions: ActionBinding) -> TaskHandler { work.handler(actions: actions) }
}

extension JobSpec.Work {
    /// The code of this work: a built-in action bound by `actions` (binding may prepare what
    /// the action needs), or the command.
    package func handler(actions: ActionBinding) -> TaskHandler {
        switch self {
        case let .action(action): .action(actions.action(for: action))
        case let .command(command): .command(command)
        }
    }
}
