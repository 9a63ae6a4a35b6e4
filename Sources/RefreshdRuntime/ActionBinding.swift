import RefreshdCore

/// Which code runs each built-in action a job may name: a maker per action name, given to the
/// runtime by whoever hosts it (`RefreshRuntime.Options.actions`).
///
/// The binding sits above the configuration on purpose: job files name actions, the host that
/// can run them supplies the code. An action with no maker still runs, and fails with a log line
/// naming it, so a job is never silently skipped. Code cannot be compared: two bindings are equal
/// when they bind the same names.
package struct ActionBinding: Sendable, Hashable {
    /// Makes the action for a spec of its name.
    package typealias Make = @Sendable (ActionSpec) -> BuiltInAction

    private var makers: [String: Make]

    package init(_ makers: [String: Make] = [:]) {
        self.makers = makers
    }

    /// Binds no action: every built-in action's run fails (a host that runs only commands).
    package static let none = ActionBinding()

    /// The names this binding runs, sorted.
    package var names: [String] { makers.keys.sorted() }

    /// This binding with `other`'s makers added (`other` wins for a name both have).
    package func merging(_ other: ActionBinding) -> ActionBinding {
        ActionBinding(makers.merging(other.makers) { _, theirs in theirs })
    }

    /// The action to run for `spec`.
    package func action(for spec: ActionSpec) -> BuiltInAction {
        if let make = makers[spec.name] { return make(spec) }
        let name = spec.name
        let message = ActionSpec.unboundMessage(name, bound: names)
        return BuiltInAction(name: name) { _ in ActionResult(success: false, log: [message]) }
    }

    package static func == (a: ActionBinding, b: ActionBinding) -> Bool { a.names == b.names }

    package func hash(into hasher: inout Hasher) { hasher.combine(names) }
}
