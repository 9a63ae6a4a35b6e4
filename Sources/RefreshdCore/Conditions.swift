/// The machine conditions processing requests can wait for.
public struct Conditions: Sendable, Hashable {
    /// The machine runs on external power (AC, or no battery at all).
    public var externalPower: Bool
    /// A non-loopback interface is up with a default route.
    public var network: Bool

    /// Conditions as given; both true by default (what a machine without sensors reports).
    public init(externalPower: Bool = true, network: Bool = true) {
        self.externalPower = externalPower
        self.network = network
    }

    /// Whether a request needing `power` and `network` may run now.
    package func allow(power: Bool, network needsNetwork: Bool) -> Bool {
        (!power || externalPower) && (!needsNetwork || network)
    }
}
