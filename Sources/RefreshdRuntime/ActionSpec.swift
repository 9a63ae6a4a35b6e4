/// A built-in action as a job file names it (`action: stage-playlist`, or a widget's
/// `provider: playlist`): its name, a fingerprint of its options, and how to make it.
///
/// Job specs are compared on reload to tell changed jobs from unchanged ones, and a closure
/// cannot be compared: two specs are equal when their names and option fingerprints are.
public struct ActionSpec: Sendable, Hashable {
    public var name: String
    /// Identifies the options (e.g. their canonical text): a change of options is a changed job.
    public var fingerprint: String
    public var make: @Sendable () -> BuiltInAction

    public init(name: String, fingerprint: String, make: @escaping @Sendable () -> BuiltInAction) {
        self.name = name
        self.fingerprint = fingerprint
        self.make = make
    }

    public static func == (a: ActionSpec, b: ActionSpec) -> Bool { a.name == b.name && a.fingerprint == b.fingerprint }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(fingerprint)
    }
}
