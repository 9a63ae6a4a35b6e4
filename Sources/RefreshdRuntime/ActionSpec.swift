/// A built-in action as a job file names it (`action: stage-playlist`, or a widget's
/// `provider: playlist`): its name and its options, as data.
///
/// The configuration produces it and holds no code; the host's `ActionBinding` turns it into
/// the `BuiltInAction` that runs (the daemon binds the staging actions, the simulator its models),
/// so job specs stay plain values, compared on reload to tell changed jobs from unchanged ones.
public struct ActionSpec: Sendable, Hashable {
    public var name: String
    /// Identifies the options (e.g. their canonical text): a change of options is a changed job.
    public var fingerprint: String
    /// The options as the action's code reads them (e.g. JSON); equal fingerprints mean equal
    /// payloads, so it takes no part in comparing specs.
    public var payload: String

    public init(name: String, fingerprint: String, payload: String) {
        self.name = name
        self.fingerprint = fingerprint
        self.payload = payload
    }

    public static func == (a: ActionSpec, b: ActionSpec) -> Bool { a.name == b.name && a.fingerprint == b.fingerprint }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(fingerprint)
    }
}

/// Which code runs each built-in action a job may name: a maker per action name, given to the
/// runtime by whoever hosts it (`RefreshRuntime.Options.actions`).
///
/// The binding sits above the configuration on purpose: job files name actions, the host that
/// can run them supplies the code. An action with no maker still runs, and fails with a log line
/// naming it, so a job is never silently skipped. Code cannot be compared: two bindings are equal
/// when they bind the same names.
public struct ActionBinding: Sendable, Hashable {
    /// Makes the action for a spec of its name.
    public typealias Make = @Sendable (ActionSpec) -> BuiltInAction

    private var makers: [String: Make]

    public init(_ makers: [String: Make] = [:]) {
        self.makers = makers
    }

    /// Binds no action: every built-in action's run fails (a host that runs only commands).
    public static let none = ActionBinding()

    /// The names this binding runs, sorted.
    public var names: [String] { makers.keys.sorted() }

    /// This binding with `other`'s makers added (`other` wins for a name both have).
    public func merging(_ other: ActionBinding) -> ActionBinding {
        ActionBinding(makers.merging(other.makers) { _, theirs in theirs })
    }

    /// The action to run for `spec`.
    public func action(for spec: ActionSpec) -> BuiltInAction {
        if let make = makers[spec.name] { return make(spec) }
        let name = spec.name
        return BuiltInAction(name: name) { _ in
            ActionResult(success: false, log: ["no built-in action \"\(name)\" in this host (it runs commands and "
                + "\(makersText)); expected a job with command:"])
        }
    }

    public static func == (a: ActionBinding, b: ActionBinding) -> Bool { a.names == b.names }

    public func hash(into hasher: inout Hasher) { hasher.combine(names) }

    private var makersText: String {
        makers.isEmpty ? "no built-in actions" : names.joined(separator: ", ")
    }
}
