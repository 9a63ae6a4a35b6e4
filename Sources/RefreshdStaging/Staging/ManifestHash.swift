/// FNV-1a, 64 bits: a fingerprint of a library listing and staging options, to tell whether a
/// staged day is still current. A change detector, not a defence against crafted collisions.
package struct ManifestHash: Sendable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    /// Adds a field; fields are separated so ("ab", "c") and ("a", "bc") differ.
    package mutating func add(_ text: String) {
        for byte in text.utf8 { mix(byte) }
        mix(0x1F)
    }

    private mutating func mix(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01B3
    }

    /// 16 hex digits.
    package var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash of one string, as 8 hex digits (file-name suffixes).
    package static func short(_ text: String) -> String {
        var hash = ManifestHash()
        hash.add(text)
        return String(hash.hex.suffix(8))
    }
}
