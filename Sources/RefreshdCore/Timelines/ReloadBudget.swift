/// How many non-exempt reloads one widget (kind and family) may perform in any trailing window.
///
/// iOS gives a frequently viewed widget roughly 40-70 reloads a day (unpublished); 50 is the
/// default. `unlimited` is for development, as iOS imposes no budget under a debugger.
package enum ReloadBudget: Sendable, Hashable, Codable, CustomStringConvertible {
    case limited(Int)
    case unlimited

    package static let `default` = ReloadBudget.limited(50)

    /// The limit, or nil when unlimited. Negative limits count as 0 (nothing may reload).
    package var limit: Int? {
        switch self {
        case let .limited(n): max(n, 0)
        case .unlimited: nil
        }
    }

    /// `50` or `unlimited`.
    package var description: String { limit.map(String.init) ?? "unlimited" }
}
