/// The machine conditions processing requests can wait for.
public struct Conditions: Sendable, Hashable {
    public var externalPower: Bool
    public var network: Bool

    public init(externalPower: Bool = true, network: Bool = true) {
        self.externalPower = externalPower
        self.network = network
    }

    /// Whether a request needing `power` and `network` may run now.
    public func allow(power: Bool, network needsNetwork: Bool) -> Bool {
        (!power || externalPower) && (!needsNetwork || network)
    }
}
