/// Codable conformances for the core's value types, used by `SchedulerSnapshot`, the runtime's
/// observations and the simulation report.
///
/// Instants encode as ISO 8601 UTC text with milliseconds (`2026-11-23T04:00:00.000Z`): exact to
/// the core's resolution, readable in every `--json` output, and sortable as text. Decoding
/// takes the same form (milliseconds optional) and nothing else.
extension Instant: Codable {
    /// Reads the ISO 8601 UTC form `encode(to:)` writes (milliseconds optional); anything else is a
    /// `DecodingError` naming the text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let instant = ISO8601.parse(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected an ISO 8601 UTC instant like 2026-11-23T04:00:00.000Z, found \"\(text)\"")
        }
        self = instant
    }

    /// Writes the instant as ISO 8601 UTC text with milliseconds: exact, readable, sortable.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

/// `submitted`, `resubmit` or `retry`.
extension PendingRequest.Origin: Codable {}

/// `{"externalPower": true, "network": false}`.
extension Conditions: Codable {
    private enum CodingKeys: String, CodingKey {
        case externalPower, network
    }

    /// Reads `{"externalPower": Bool, "network": Bool}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(externalPower: try container.decode(Bool.self, forKey: .externalPower),
                  network: try container.decode(Bool.self, forKey: .network))
    }

    /// Writes `{"externalPower": Bool, "network": Bool}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(externalPower, forKey: .externalPower)
        try container.encode(network, forKey: .network)
    }
}
