/// A built-in action as a job file names it (`action: stage-playlist`, or a widget's
/// `provider: playlist`): its name and its options, as data.
///
/// The configuration produces it and holds no code; the host's `ActionBinding` turns it into
/// the `BuiltInAction` that runs (the daemon binds the staging actions, the simulator its models),
/// so job specs stay plain values, compared on reload to tell changed jobs from unchanged ones.
package struct ActionSpec: Sendable, Hashable {
    package var name: String
    /// Identifies the options (e.g. their canonical text): a change of options is a changed job.
    package var fingerprint: String
    /// The options as the action's code reads them (e.g. JSON); equal fingerprints mean equal
    /// payloads, so it takes no part in comparing specs.
    package var payload: String

    package init(name: String, fingerprint: String, payload: String) {
        self.name = name
        self.fingerprint = fingerprint
        self.payload = payload
    }

    package static func == (a: ActionSpec, b: ActionSpec) -> Bool { a.name == b.name && a.fingerprint == b.fingerprint }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(fingerprint)
    }

    /// The line an action no host binds fails with (the run still happens, and fails, so a job is
    /// never silently skipped): it names the action and what the host runs (`bound`, sorted).
    package static func unboundMessage(_ name: String, bound: [String]) -> String {
        "no built-in action \"\(name)\" in this host (it runs commands and "
            + "\(bound.isEmpty ? "no built-in actions" : bound.joined(separator: ", "))); expected a job with command:"
    }
}
