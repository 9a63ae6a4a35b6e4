/// Codable conformances for the core's value types, used by `SchedulerSnapshot`.
///
/// Instants encode as a bare integer: milliseconds since the Unix epoch (UTC), the core's own
/// representation. It is exact (no parsing, no rounding, no Foundation), sorts and diffs as a
/// number, and round-trips bit for bit; `Instant.iso8601` gives the readable form when a report
/// wants it.
extension Instant: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(milliseconds: try container.decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

/// `submitted`, `resubmit` or `retry`.
extension PendingRequest.Origin: Codable {}

/// `{"externalPower": true, "network": false}`.
extension Conditions: Codable {
    private enum CodingKeys: String, CodingKey {
        case externalPower, network
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(externalPower: try container.decode(Bool.self, forKey: .externalPower),
                  network: try container.decode(Bool.self, forKey: .network))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(externalPower, forKey: .externalPower)
        try container.encode(network, forKey: .network)
    }
}
