/// A whole image decoded to RGB at full size in stored orientation: for checking renditions (and
/// in tests), never for staging, which must not hold a source whole.
package struct DecodedImage: Sendable, Hashable {
    package var width: Int
    package var height: Int
    package var info: ImageInfo
    /// `width * height * 3` bytes, rows top to bottom.
    package var pixels: [UInt8]

    package static func decode(_ path: String) throws(ImageError) -> DecodedImage {
        let reader = try ScanlineSource(path: path)
        try reader.start(scaleNumerator: 8)
        var pixels = [UInt8](repeating: 0, count: reader.width * reader.height * 3)
        try pixels.withUnsafeMutableBufferPointer { (buffer) throws(ImageError) in
            for y in 0..<reader.height { try reader.readRow(into: buffer.baseAddress! + y * reader.width * 3) }
        }
        try reader.finish()
        return DecodedImage(width: reader.width, height: reader.height, info: reader.info, pixels: pixels)
    }

    /// The RGB of one pixel.
    package func pixel(x: Int, y: Int) -> (r: Int, g: Int, b: Int) {
        let p = (y * width + x) * 3
        return (Int(pixels[p]), Int(pixels[p + 1]), Int(pixels[p + 2]))
    }
}
