/// Why a widget went stale: a reload its policy or an explicit request asked for could not happen.
package enum StaleReason: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The reload budget was spent; the reload is deferred.
    case budgetSpent
    /// The provider failed (exit status, malformed or oversized output).
    case providerFailed
    /// The provider ran out of its allowance.
    case providerExpired
    /// refreshd stopped while the provider ran.
    case providerInterrupted
    /// The reload fell due while refreshd was down.
    case refreshdDown
    /// The reload fell due while the device was in Low Power Mode.
    case lowPower

    /// `budget spent`, `provider failed`...: the words the report and the status use.
    package var description: String {
        switch self {
        case .budgetSpent: "budget spent"
        case .providerFailed: "provider failed"
        case .providerExpired: "provider expired"
        case .providerInterrupted: "provider interrupted"
        case .refreshdDown: "refreshd down"
        case .lowPower: "low power mode"
        }
    }
}
