import RefreshdCore

extension JobSpec {
    /// What runs when the job launches: its built-in action, else its widget's built-in provider
    /// (a timeline job with `provider: playlist` has no command), else its command. `actions`
    /// supplies the code of built-in actions (see `ActionBinding`).
    public func handler(actions: ActionBinding) -> TaskHandler {
        if let action { return .action(actions.action(for: action)) }
        if case let .action(provider)? = widget?.provider { return .action(actions.action(for: provider)) }
        return .command(command)
    }
}
