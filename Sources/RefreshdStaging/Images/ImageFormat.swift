/// The image formats renditions are made from, recognised by their first bytes, not their names.
package enum ImageFormat: String, Sendable, Hashable, Codable {
    case jpeg
    case png

    /// The format whose signature `bytes` starts with, or nil.
    package static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if bytes.count >= 8, bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return .png
        }
        return nil
    }
}
