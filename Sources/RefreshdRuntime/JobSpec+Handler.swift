import RefreshdCore

extension JobSpec {
    /// What runs when the job launches (`work`, the rule), with `actions` supplying the code of
    /// built-in actions (see `ActionBinding`).
    package func handler(actions: ActionBinding) -> TaskHandler {
        switch work {
        case let .action(action): .action(actions.action(for: action))
        case let .command(command): .command(command)
        }
    }
}
