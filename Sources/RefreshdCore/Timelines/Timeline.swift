/// What a provider returns for one widget family: entries in date order and a reload policy.
///
/// The initializer sorts entries by date, keeping the provider's order among equal dates (the
/// later one of equal dates is the one shown). The machine shows each entry at its date without
/// asking the provider again, and reloads when the policy says.
package struct Timeline: Sendable, Hashable, Codable {
    package private(set) var entries: [TimelineEntry]
    package var policy: TimelinePolicy

    package init(entries: [TimelineEntry], policy: TimelinePolicy) {
        self.entries = entries.enumerated()
            .sorted { $0.element.date != $1.element.date ? $0.element.date < $1.element.date : $0.offset < $1.offset }
            .map(\.element)
        self.policy = policy
    }

    private enum CodingKeys: String, CodingKey { case entries, policy }

    /// Decoding sorts too, so a timeline read back from the store obeys the same order.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(entries: try c.decode([TimelineEntry].self, forKey: .entries),
                  policy: try c.decode(TimelinePolicy.self, forKey: .policy))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entries, forKey: .entries)
        try c.encode(policy, forKey: .policy)
    }

    /// The index of the entry shown at `now`: the last one whose date is at or before it.
    /// Binary search, so a clock step or a restore costs O(log n).
    package func currentIndex(at now: Instant) -> Int? {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].date <= now { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }

    /// The instant the policy asks for a reload, for a timeline received at `received`.
    package func policyReload(receivedAt received: Instant) -> Instant? {
        switch policy {
        case .atEnd: entries.last.map(\.date) ?? received
        case let .after(date): date
        case .never: nil
        }
    }
}
