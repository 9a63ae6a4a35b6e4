#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RefreshdConfig

/// Makes a display-size JPEG rendition of a JPEG or PNG without decoding the source at full size.
///
/// - Fill, not fit: the rendition is exactly the requested pixel size, the source's centre
///   cropped to its aspect ratio, as a widget background fills its whole frame.
/// - JPEG sources are decoded by libjpeg-turbo at the smallest DCT scale (n/8) whose cropped area
///   still covers the target, one scanline at a time; PNG sources row by row at full width. Then
///   `AreaResampler` averages down to the exact size, the EXIF orientation is applied, and the
///   result is encoded as a baseline JPEG (quality 85 by default).
/// - Memory follows the output: a source scanline plus a few output-wide rows, plus the whole
///   rendition for rotated orientations. The estimate (the rendition at 4 bytes a pixel, plus
///   every coefficient of a JPEG libjpeg cannot stream: progressive, or sequential with a first
///   scan that leaves out a component; plus the whole image of an interlaced PNG) must fit the
///   memory ceiling, or the asset is refused with the figures before any pixel is decoded.
/// - CPU follows the source: a source over `maxSourcePixels` is refused from its header, and
///   `isExpired` is asked every few rows, so an expired run stops inside a decode.
package enum RenditionRenderer {
    /// How the source is decoded: the real path, or the naive one (full size into an RGBA
    /// buffer, then reduced), kept for the benchmark's side-by-side comparison.
    package enum Strategy: String, Sendable {
        case reducedScale
        case fullDecode
    }

    /// What a rendering did, for logs and the benchmark.
    package struct Report: Sendable, Hashable {
        package var source: ImageInfo
        package var scaleNumerator: Int
        package var decodedWidth: Int
        package var decodedHeight: Int
        package var estimatedBytes: Int
    }

    package static let defaultQuality = StageOptions.defaultQuality

    /// The header of an image: size and orientation, no pixels decoded.
    package static func probe(_ path: String, followSymlinks: Bool = true) throws(ImageError) -> ImageInfo {
        try ScanlineSource(path: path, followSymlinks: followSymlinks).info
    }

    /// The working memory a rendition of this source at this size is estimated to need.
    /// Saturates at `Int.max`: an estimate that overflowed must refuse the source, not wrap to a
    /// small number that passes the ceiling.
    package static func estimatedBytes(for info: ImageInfo, width: Int, height: Int) -> Int {
        var bytes = saturating(width, height, 4)
        bytes = saturating(sum: bytes, info.coefficientBytes)
        if info.isInterlaced { bytes = saturating(sum: bytes, saturating(info.width, info.height, 4)) }
        return bytes
    }

    static func saturating(_ factors: Int...) -> Int {
        factors.reduce(1) { product, factor in
            let (value, overflow) = product.multipliedReportingOverflow(by: factor)
            return overflow ? Int.max : value
        }
    }

    static func saturating(sum a: Int, _ b: Int) -> Int {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : value
    }

    /// The reasons a source is refused from its header alone, before decoding: over the pixel
    /// ceiling, or a rendition of it over the memory ceiling. nil when it may be decoded.
    package static func refusal(for info: ImageInfo, width: Int, height: Int, memoryCeiling: Int,
                               maxSourcePixels: Int) -> String? {
        let pixels = saturating(info.width, info.height)
        if pixels > maxSourcePixels {
            return "source is \(info.width)x\(info.height) (\(pixels / 1_000_000) megapixels), over the ceiling of "
                + "\(maxSourcePixels) pixels (max-source-pixels): decoding it would take too long"
        }
        let estimate = estimatedBytes(for: info, width: width, height: height)
        guard estimate > memoryCeiling else { return nil }
        var why = "rendition \(width)x\(height) needs about \(megabytes(estimate))"
        if info.isProgressive { why += " (a progressive JPEG keeps all its coefficients)" }
        if info.isMultiScan { why += " (a JPEG whose first scan leaves out a component keeps all its coefficients)" }
        if info.isInterlaced { why += " (an interlaced PNG is decoded whole)" }
        return "\(why), over the memory ceiling of \(megabytes(memoryCeiling))"
    }

    /// Renders `source` to a `width`x`height` JPEG at `output` (written, flushed and fsynced; on
    /// failure nothing is left at `output`).
    @discardableResult
    package static func render(source: String, to output: String, width: Int, height: Int,
                              memoryCeiling: Int, quality: Int = defaultQuality,
                              maxSourcePixels: Int = Int.max, isExpired: () -> Bool = { false },
                              followSymlinks: Bool = true,
                              strategy: Strategy = .reducedScale) throws(ImageError) -> Report {
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ImageError(file: output, reason: "cannot open: \(CFile.systemError())") }
        defer { close(fd) }
        do {
            return try render(source: source, toDescriptor: fd, named: output, width: width, height: height,
                              memoryCeiling: memoryCeiling, quality: quality, maxSourcePixels: maxSourcePixels,
                              isExpired: isExpired, followSymlinks: followSymlinks, strategy: strategy)
        } catch {
            unlink(output)
            throw error
        }
    }

    /// Renders into the open file `descriptor` (a temporary file staging created with `O_EXCL`;
    /// `named` is its path for messages). The descriptor stays open; the bytes are fsynced.
    @discardableResult
    package static func render(source: String, toDescriptor descriptor: Int32, named output: String, width: Int,
                              height: Int, memoryCeiling: Int, quality: Int = defaultQuality,
                              maxSourcePixels: Int = Int.max, isExpired: () -> Bool = { false },
                              followSymlinks: Bool = true,
                              strategy: Strategy = .reducedScale) throws(ImageError) -> Report {
        guard width > 0, height > 0, width <= 16_384, height <= 16_384 else {
            throw ImageError(file: source, reason: "rendition size \(width)x\(height) is not within 1x1...16384x16384")
        }
        let reader = try ScanlineSource(path: source, followSymlinks: followSymlinks)
        let info = reader.info
        let estimate = estimatedBytes(for: info, width: width, height: height)
        if strategy == .reducedScale,
           let why = refusal(for: info, width: width, height: height, memoryCeiling: memoryCeiling,
                             maxSourcePixels: maxSourcePixels) {
            throw ImageError(file: source, reason: why)
        }
        if isExpired() { throw ImageError.expired(source) }
        let storedWidth = info.orientation.swapsAxes ? height : width
        let storedHeight = info.orientation.swapsAxes ? width : height
        var scale = 8
        if info.format == .jpeg && strategy == .reducedScale {
            let crop = centerCrop(width: Double(info.width), height: Double(info.height),
                                  aspect: Double(storedWidth) / Double(storedHeight))
            scale = (1...8).first { n in
                crop.width * Double(n) / 8 >= Double(storedWidth) && crop.height * Double(n) / 8 >= Double(storedHeight)
            } ?? 8
        }
        // libjpeg asks the expiration itself at each of its progress steps (the scans of a
        // multi-scan file are all read inside `start`), for as long as this call runs.
        return try withoutActuallyEscaping(isExpired) { (isExpired) throws(ImageError) -> Report in
            reader.setStopCheck(isExpired)
            defer { reader.setStopCheck(nil) }
            try reader.start(scaleNumerator: scale, memoryLimit: strategy == .reducedScale ? memoryCeiling : 0,
                             isExpired: isExpired)
            let crop = centerCrop(width: Double(reader.width), height: Double(reader.height),
                                  aspect: Double(storedWidth) / Double(storedHeight))
            let resampler = AreaResampler(sourceWidth: reader.width, crop: crop, outWidth: storedWidth, outHeight: storedHeight)
            let file = try CFile(descriptor: descriptor, path: output)
            do {
                let encoder = try JPEGEncoder(file: file, width: width, height: height, quality: quality)
                let writer = OrientedWriter(encoder: encoder, orientation: info.orientation,
                                            storedWidth: storedWidth, storedHeight: storedHeight)
                let emit: (UnsafePointer<UInt8>) throws(ImageError) -> Void = { row throws(ImageError) in
                    try writer.write(storedRow: row)
                }
                var row = [UInt8](repeating: 0, count: reader.width * 3)
                if strategy == .fullDecode {
                    // What a naive widget does: the whole image as RGBA, then reduced.
                    var whole = [UInt8](repeating: 0, count: reader.width * reader.height * 4)
                    for y in 0..<reader.height {
                        if y % 16 == 0, isExpired() { throw ImageError.expired(source) }
                        try row.withUnsafeMutableBufferPointer { (r) throws(ImageError) in try reader.readRow(into: r.baseAddress!) }
                        for x in 0..<reader.width {
                            let p = (y * reader.width + x) * 4
                            whole[p] = row[x * 3]; whole[p + 1] = row[x * 3 + 1]; whole[p + 2] = row[x * 3 + 2]; whole[p + 3] = 255
                        }
                    }
                    try reader.finish()
                    for y in 0..<reader.height {
                        for x in 0..<reader.width {
                            let p = (y * reader.width + x) * 4
                            row[x * 3] = whole[p]; row[x * 3 + 1] = whole[p + 1]; row[x * 3 + 2] = whole[p + 2]
                        }
                        try row.withUnsafeBufferPointer { (r) throws(ImageError) in try resampler.push(r.baseAddress!, emit: emit) }
                    }
                } else {
                    for y in 0..<reader.height {
                        if y % 16 == 0, isExpired() { throw ImageError.expired(source) }
                        try row.withUnsafeMutableBufferPointer { (r) throws(ImageError) in try reader.readRow(into: r.baseAddress!) }
                        try row.withUnsafeBufferPointer { (r) throws(ImageError) in try resampler.push(r.baseAddress!, emit: emit) }
                    }
                    try reader.finish()
                }
                try resampler.finish(emit: emit)
                try writer.finish()
                try file.sync()
            }
            return Report(source: info, scaleNumerator: scale, decodedWidth: reader.width, decodedHeight: reader.height,
                          estimatedBytes: estimate)
        }
    }

    /// The centred rectangle of a `width`x`height` image with the given aspect ratio.
    static func centerCrop(width: Double, height: Double, aspect: Double) -> (x: Double, y: Double, width: Double, height: Double) {
        if width / height > aspect {
            let w = height * aspect
            return ((width - w) / 2, 0, w, height)
        }
        let h = width / aspect
        return (0, (height - h) / 2, width, h)
    }

    static func megabytes(_ bytes: Int) -> String { StageOptions.megabytes(bytes) }
}
