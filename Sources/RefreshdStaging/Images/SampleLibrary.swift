import Foundation

/// A small deterministic wallpaper library for trying staging on a fresh machine: large JPEGs
/// (some stored sideways with EXIF orientation 6, as phones store portrait photos) and PNGs,
/// painted row by row (gradients and bands, different per image) by this module's encoders.
package enum SampleLibrary {
    package struct Item: Sendable, Hashable {
        package var name: String
        package var width: Int
        package var height: Int
        package var orientation: ExifOrientation
        package var format: ImageFormat
    }

    /// The default library: six 4000x2400 JPEGs (two with orientation 6) and two PNGs.
    package static let items: [Item] = (0..<8).map { i in
        let png = i >= 6
        return Item(name: png ? String(format: "wallpaper-%02d.png", i + 1) : String(format: "wallpaper-%02d.jpg", i + 1),
                    width: png ? 2400 : 4000, height: png ? 1600 : 2400,
                    orientation: i == 2 || i == 5 ? .right : .up, format: png ? .png : .jpeg)
    }

    /// Writes `items` into `directory` (created if missing); existing files of the same names are
    /// replaced. Returns the paths written.
    @discardableResult
    package static func make(in directory: String, items: [Item] = items) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var paths: [String] = []
        for (index, item) in items.enumerated() {
            let path = (directory as NSString).appendingPathComponent(item.name)
            try write(path: path, width: item.width, height: item.height, format: item.format,
                      orientation: item.orientation, seed: index)
            paths.append(path)
        }
        return paths
    }

    /// A black (all zeros) 1-bit grayscale PNG: a tiny file, quick to write however large the
    /// image, and as costly to decode as any since rows are expanded to RGBA (the hostile-input
    /// tests' long decode).
    package static func writeBlankPNG(path: String, width: Int, height: Int) throws(ImageError) {
        let file = try CFile(path: path, mode: "wb")
        let encoder = try PNGEncoder(file: file, width: width, height: height, bilevel: true)
        let row = [UInt8](repeating: 0, count: (width + 7) / 8)
        for _ in 0..<height {
            try row.withUnsafeBufferPointer { (r) throws(ImageError) in try encoder.write(row: r.baseAddress!) }
        }
        try encoder.finish()
        try file.sync()
    }

    /// One painted image: a diagonal gradient in a hue given by `seed`, with bands every 1/8 of
    /// the width and a bright left edge, so orientation and cropping can be seen. A JPEG can be
    /// written with one sequential scan per component (`componentScans`) or with 379
    /// progressive scans (`manyScans`), the layouts hostile-input tests need.
    package static func write(path: String, width: Int, height: Int, format: ImageFormat,
                             orientation: ExifOrientation = .up, seed: Int = 0, interlaced: Bool = false,
                             componentScans: Bool = false, manyScans: Bool = false,
                             paint: ((Int, Int) -> (UInt8, UInt8, UInt8))? = nil) throws(ImageError) {
        let file = try CFile(path: path, mode: "wb")
        let hue = [(230, 90, 40), (40, 120, 220), (60, 180, 90), (200, 60, 160), (240, 200, 50), (90, 60, 200),
                   (30, 170, 180), (220, 110, 110)][((seed % 8) + 8) % 8]
        let painter = paint ?? { x, y in
            let t = (x * 255 / max(1, width - 1) + y * 255 / max(1, height - 1)) / 2
            let band = (x * 8 / max(1, width)) % 2 == 0 ? 1.0 : 0.8
            let edge = x < width / 50 ? 255 : 0
            return (UInt8(min(255, max(edge, Int(Double(hue.0 * t / 255) * band)))),
                    UInt8(min(255, Int(Double(hue.1 * (255 - t / 2) / 255) * band))),
                    UInt8(min(255, Int(Double(hue.2 * t / 255 + 20) * band))))
        }
        var row = [UInt8](repeating: 0, count: width * 3)
        func fill(_ y: Int) {
            for x in 0..<width {
                let (r, g, b) = painter(x, y)
                row[x * 3] = r; row[x * 3 + 1] = g; row[x * 3 + 2] = b
            }
        }
        switch format {
        case .jpeg:
            let encoder = try JPEGEncoder(file: file, width: width, height: height, quality: 90, orientation: orientation,
                                          scans: manyScans ? .manyProgressive : componentScans ? .perComponent : .interleaved)
            for y in 0..<height {
                fill(y)
                try row.withUnsafeBufferPointer { (r) throws(ImageError) in try encoder.write(row: r.baseAddress!) }
            }
            try encoder.finish()
        case .png:
            let encoder = try PNGEncoder(file: file, width: width, height: height, interlaced: interlaced)
            for _ in 0..<encoder.passes {
                for y in 0..<height {
                    fill(y)
                    try row.withUnsafeBufferPointer { (r) throws(ImageError) in try encoder.write(row: r.baseAddress!) }
                }
            }
            try encoder.finish()
        }
        try file.sync()
    }
}
