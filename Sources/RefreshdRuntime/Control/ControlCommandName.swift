/// The commands of the control protocol, by their wire names.
///
/// `reload` and `activity` are reserved for the widget-timeline and live-activity machines:
/// today they are answered with the error code `unsupported`, so a client written for a later
/// refreshd gets a clear answer from this one.
public enum ControlCommandName: String, Codable, Sendable, CaseIterable {
    case hello, pending, submit, cancel
    case cancelAll = "cancel-all"
    case simulateLaunch = "simulate-launch"
    case simulateExpiration = "simulate-expiration"
    case status, why, snapshot, subscribe, metrics
    case reload, activity

    /// Whether this refreshd carries the command out (false: replied with `unsupported`).
    public var isSupported: Bool { self != .reload && self != .activity }
}
