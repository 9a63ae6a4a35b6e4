#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One image file as a stream of RGB rows, JPEG or PNG alike, in stored orientation.
///
/// Opening reads the header only (the probe). `start(scaleNumerator:)` begins decoding: JPEG at
/// n/8 scale, PNG at full size (alpha composited over black, row by row; an interlaced PNG is
/// read whole first, see `RenditionRenderer`).
final class ScanlineSource {
    let info: ImageInfo
    private let file: CFile
    private let jpeg: JPEGDecoder?
    private let png: PNGDecoder?
    private var rgba: [UInt8] = []
    private var whole: [UInt8] = []
    private var nextRow = 0
    private(set) var width = 0
    private(set) var height = 0

    /// Opens `path`; with `followSymlinks` false a symlink there is refused (`O_NOFOLLOW`), so
    /// an entry checked when the library was listed cannot be swapped for a link before it is read.
    init(path: String, followSymlinks: Bool = true) throws(ImageError) {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let reason = errno == ELOOP && !followSymlinks ? "is a symlink (it was not when the library was listed); not followed"
                : "cannot read: \(CFile.systemError())"
            throw ImageError(file: path, reason: reason)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw ImageError(file: path, reason: "cannot read: \(CFile.systemError())")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw ImageError(file: path, reason: "not a regular file") }
        guard status.st_size > 0 else { throw ImageError(file: path, reason: "empty file (0 bytes)") }
        file = try CFile(descriptor: fd, path: path, mode: "rb")
        let leading = file.leadingBytes(8)
        switch ImageFormat.sniff(leading) {
        case .jpeg:
            let decoder = try JPEGDecoder(file: file)
            jpeg = decoder
            png = nil
            info = ImageInfo(format: .jpeg, width: decoder.width, height: decoder.height,
                             orientation: decoder.orientation, isProgressive: decoder.isProgressive, isInterlaced: false,
                             isMultiScan: decoder.isMultiScan, coefficientBytes: decoder.coefficientBytes)
        case .png:
            let decoder = try PNGDecoder(file: file)
            png = decoder
            jpeg = nil
            info = ImageInfo(format: .png, width: decoder.width, height: decoder.height,
                             orientation: decoder.orientation, isProgressive: false, isInterlaced: decoder.isInterlaced)
        case nil:
            let hex = leading.prefix(4).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            throw ImageError(file: path, reason: "not a JPEG or PNG image (starts with \(hex.joined(separator: " ")))")
        }
        guard info.width > 0, info.height > 0 else { throw ImageError(file: path, reason: "image has no pixels") }
    }

    /// What a JPEG decode asks at libjpeg's progress steps (nil: nothing); cleared by the caller
    /// before the closure's scope ends.
    func setStopCheck(_ check: (() -> Bool)?) { jpeg?.stopCheck.check = check }

    /// Starts decoding; JPEG at `scaleNumerator`/8, PNG always at full size. `isExpired` is
    /// asked between the rows of a whole-image (interlaced) read.
    func start(scaleNumerator: Int, memoryLimit: Int = 0, isExpired: () -> Bool = { false }) throws(ImageError) {
        if let jpeg {
            try jpeg.start(scaleNumerator: scaleNumerator, memoryLimit: memoryLimit)
            width = jpeg.outputWidth
            height = jpeg.outputHeight
        } else if let png {
            try png.start()
            width = png.width
            height = png.height
            rgba = [UInt8](repeating: 0, count: width * 4)
            if png.passes > 1 {
                whole = [UInt8](repeating: 0, count: width * height * 4)
                try whole.withUnsafeMutableBufferPointer { (buffer) throws(ImageError) in
                    for _ in 0..<png.passes {
                        for row in 0..<height {
                            if isExpired() { throw ImageError.expired(file.path) }
                            try png.readRow(into: buffer.baseAddress! + row * width * 4)
                        }
                    }
                }
            }
        }
    }

    /// The next row as `width * 3` RGB bytes.
    func readRow(into rgb: UnsafeMutablePointer<UInt8>) throws(ImageError) {
        if let jpeg {
            try jpeg.readRow(into: rgb)
            return
        }
        guard let png else { return }
        if whole.isEmpty {
            try rgba.withUnsafeMutableBufferPointer { (buffer) throws(ImageError) in
                try png.readRow(into: buffer.baseAddress!)
            }
            ScanlineSource.composite(rgba, offset: 0, width: width, into: rgb)
        } else {
            ScanlineSource.composite(whole, offset: nextRow * width * 4, width: width, into: rgb)
        }
        nextRow += 1
    }

    func finish() throws(ImageError) {
        if let jpeg { try jpeg.finish() }
        if let png { try png.finish() }
    }

    /// RGBA over black: a transparent wallpaper pixel shows as the dark widget background.
    private static func composite(_ rgba: [UInt8], offset: Int, width: Int, into rgb: UnsafeMutablePointer<UInt8>) {
        rgba.withUnsafeBufferPointer { source in
            for x in 0..<width {
                let p = offset + x * 4
                let alpha = UInt32(source[p + 3])
                for c in 0..<3 {
                    rgb[x * 3 + c] = alpha == 255 ? source[p + c] : UInt8((UInt32(source[p + c]) * alpha + 127) / 255)
                }
            }
        }
    }
}
