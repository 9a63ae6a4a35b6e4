import CPNG

/// Reads a PNG row by row through libpng as 8-bit RGBA, whatever its color type and depth.
///
/// An Adam7-interlaced PNG cannot be reduced row by row (each pass covers the whole image), so
/// `passes` tells the caller; the renderer decodes such a file whole or refuses it when that would
/// exceed the memory ceiling.
final class PNGDecoder {
    let path: String
    private let file: CFile
    private let state: UnsafeMutablePointer<rd_png>
    private(set) var passes = 1

    /// The largest width or height accepted (libpng refuses more before allocating anything).
    static let maximumSide = 65_535

    init(file: CFile) throws(ImageError) {
        self.path = file.path
        self.file = file
        state = .allocate(capacity: 1)
        guard rd_png_decoder_open(state, file.handle, UInt32(PNGDecoder.maximumSide)) == 1 else {
            // deinit closes and frees the state: a class whose init throws is deinitialized.
            let error = failure("not a readable PNG")
            throw error
        }
    }

    deinit {
        rd_png_close(state)
        state.deallocate()
    }

    var width: Int { Int(rd_png_width(state)) }
    var height: Int { Int(rd_png_height(state)) }
    var isInterlaced: Bool { rd_png_interlaced(state) != 0 }

    /// The orientation from an eXIf chunk before the image data, `.up` without one.
    var orientation: ExifOrientation {
        var bytes: UnsafeMutablePointer<UInt8>?
        let count = rd_png_exif(state, &bytes)
        guard let bytes, count > 0 else { return .up }
        return ExifOrientation.parse(tiff: UnsafeRawBufferPointer(start: bytes, count: Int(count)))
    }

    func start() throws(ImageError) {
        let result = rd_png_decoder_start(state)
        guard result > 0 else { throw failure("cannot decode") }
        passes = Int(result)
    }

    /// Reads the next row (`width * 4` bytes of RGBA); for an interlaced file, call it
    /// `height` times per pass over the same whole-image rows.
    func readRow(into row: UnsafeMutablePointer<UInt8>) throws(ImageError) {
        guard rd_png_decoder_read(state, row) == 1 else { throw failure("corrupt or truncated PNG") }
    }

    func finish() throws(ImageError) {
        guard rd_png_decoder_finish(state) == 1 else { throw failure("corrupt or truncated PNG") }
    }

    private func failure(_ what: String) -> ImageError {
        let detail = withUnsafeBytes(of: state.pointee.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImageError(file: path, reason: detail.isEmpty ? what : "\(what) (libpng: \(detail))")
    }
}
