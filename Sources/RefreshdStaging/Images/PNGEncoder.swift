import CPNG

/// Writes an 8-bit RGB PNG row by row through libpng; interlaced (Adam7) on request, which the
/// caller then writes `passes` times over.
final class PNGEncoder {
    private let file: CFile
    private let state: UnsafeMutablePointer<rd_png>
    let width: Int
    let passes: Int

    /// `bilevel`: 1-bit grayscale rows of `(width + 7) / 8` bytes instead of RGB.
    init(file: CFile, width: Int, height: Int, interlaced: Bool = false, bilevel: Bool = false) throws(ImageError) {
        self.file = file
        self.width = width
        state = .allocate(capacity: 1)
        let result = bilevel ? rd_png_encoder_start_bilevel(state, file.handle, UInt32(width), UInt32(height))
            : rd_png_encoder_start(state, file.handle, UInt32(width), UInt32(height), interlaced ? 1 : 0)
        passes = Int(result)
        guard result > 0 else {
            let detail = withUnsafeBytes(of: state.pointee.message) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            // deinit closes and frees the state: a class whose init throws is deinitialized.
            throw ImageError(file: file.path, reason: "cannot encode PNG (libpng: \(detail))")
        }
    }

    deinit {
        rd_png_close(state)
        state.deallocate()
    }

    func write(row: UnsafePointer<UInt8>) throws(ImageError) {
        guard rd_png_encoder_write(state, row) == 1 else { throw failure() }
    }

    func finish() throws(ImageError) {
        guard rd_png_encoder_finish(state) == 1 else { throw failure() }
    }

    private func failure() -> ImageError {
        let detail = withUnsafeBytes(of: state.pointee.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImageError(file: file.path, reason: "cannot encode PNG (libpng: \(detail))")
    }
}
