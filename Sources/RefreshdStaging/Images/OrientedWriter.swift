/// Applies an EXIF orientation between the resampler (stored orientation) and the encoder.
///
/// Upright and mirrored images stream row by row; the other six orientations need rows in
/// another order, so the rendition (output size, never the source) is held until the end.
final class OrientedWriter {
    private let encoder: JPEGEncoder
    private let orientation: ExifOrientation
    private let storedWidth: Int
    private let storedHeight: Int
    private var held: [UInt8] = []
    private var row: [UInt8]

    init(encoder: JPEGEncoder, orientation: ExifOrientation, storedWidth: Int, storedHeight: Int) {
        self.encoder = encoder
        self.orientation = orientation
        self.storedWidth = storedWidth
        self.storedHeight = storedHeight
        row = [UInt8](repeating: 0, count: max(storedWidth, storedHeight) * 3)
        if orientation != .up && orientation != .upMirrored { held.reserveCapacity(storedWidth * storedHeight * 3) }
    }

    /// Bytes held for reordering (the rendition's size for rotated orientations, else 0).
    var heldBytes: Int { held.capacity }

    func write(storedRow source: UnsafePointer<UInt8>) throws(ImageError) {
        switch orientation {
        case .up:
            try encoder.write(row: source)
        case .upMirrored:
            for x in 0..<storedWidth {
                let from = (storedWidth - 1 - x) * 3
                row[x * 3] = source[from]
                row[x * 3 + 1] = source[from + 1]
                row[x * 3 + 2] = source[from + 2]
            }
            try row.withUnsafeBufferPointer { (r) throws(ImageError) in try encoder.write(row: r.baseAddress!) }
        default:
            held.append(contentsOf: UnsafeBufferPointer(start: source, count: storedWidth * 3))
        }
    }

    func finish() throws(ImageError) {
        if orientation != .up && orientation != .upMirrored {
            let displayWidth = orientation.swapsAxes ? storedHeight : storedWidth
            let displayHeight = orientation.swapsAxes ? storedWidth : storedHeight
            for y in 0..<displayHeight {
                for x in 0..<displayWidth {
                    let p = orientation.storedPoint(x: x, y: y, storedWidth: storedWidth, storedHeight: storedHeight)
                    let from = (p.y * storedWidth + p.x) * 3
                    row[x * 3] = held[from]
                    row[x * 3 + 1] = held[from + 1]
                    row[x * 3 + 2] = held[from + 2]
                }
                try row.withUnsafeBufferPointer { (r) throws(ImageError) in try encoder.write(row: r.baseAddress!) }
            }
        }
        try encoder.finish()
    }
}
