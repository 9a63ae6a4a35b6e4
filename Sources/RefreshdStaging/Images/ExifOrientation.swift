/// The EXIF orientation (tag 0x0112): how the stored pixels must be turned to be shown upright.
///
/// Parsed from the TIFF structure of an EXIF block with every offset checked against the block's
/// length, so a hostile file yields `.up`, never an out-of-bounds read.
package enum ExifOrientation: Int, Sendable, Hashable, Codable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Orientations 5 to 8 swap width and height.
    package var swapsAxes: Bool { rawValue >= 5 }

    /// The stored pixel shown at display position (x, y), for a stored image of the given size.
    package func storedPoint(x: Int, y: Int, storedWidth w: Int, storedHeight h: Int) -> (x: Int, y: Int) {
        switch self {
        case .up: (x, y)
        case .upMirrored: (w - 1 - x, y)
        case .down: (w - 1 - x, h - 1 - y)
        case .downMirrored: (x, h - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, h - 1 - x)
        case .rightMirrored: (w - 1 - y, h - 1 - x)
        case .left: (w - 1 - y, x)
        }
    }

    /// The orientation in a JPEG APP1 segment's payload (`Exif\0\0` then TIFF), `.up` if none.
    package static func parse(app1 bytes: UnsafeRawBufferPointer) -> ExifOrientation {
        let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        guard bytes.count > header.count, bytes.prefix(header.count).elementsEqual(header) else { return .up }
        return parse(tiff: UnsafeRawBufferPointer(rebasing: bytes[header.count...]))
    }

    /// The orientation in a TIFF structure (PNG's eXIf chunk), `.up` if absent or malformed.
    package static func parse(tiff bytes: UnsafeRawBufferPointer) -> ExifOrientation {
        guard bytes.count >= 8 else { return .up }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return .up
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at <= bytes.count - 2 else { return nil }
            let a = Int(bytes[at]), b = Int(bytes[at + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ at: Int) -> Int? {
            guard let lo = u16(little ? at : at + 2), let hi = u16(little ? at + 2 : at) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return .up }
        // IFD0 only; at most 1,000 entries looked at, whatever the count claims.
        for index in 0..<min(count, 1000) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return .up }
            guard tag == 0x0112 else { continue }
            guard u16(entry + 2) == 3, let value = u16(entry + 8) else { return .up }
            return ExifOrientation(rawValue: value) ?? .up
        }
        return .up
    }

    /// A minimal EXIF APP1 payload carrying this orientation (big-endian TIFF, one IFD entry).
    package var app1Payload: [UInt8] {
        [0x45, 0x78, 0x69, 0x66, 0, 0,
         0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,
         0x00, 0x01,
         0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, UInt8(rawValue), 0x00, 0x00,
         0x00, 0x00, 0x00, 0x00]
    }
}
