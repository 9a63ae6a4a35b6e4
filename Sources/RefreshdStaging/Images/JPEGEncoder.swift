import CJPEG

/// Writes a baseline RGB JPEG row by row through libjpeg-turbo, optionally with an EXIF
/// orientation (the sample library stores some images sideways, as cameras do).
final class JPEGEncoder {
    private let file: CFile
    private let state: UnsafeMutablePointer<rd_jpeg_encoder>
    let width: Int

    /// `componentScans`: one sequential scan per component instead of interleaved ones (for
    /// tests: such a file makes a decoder keep every coefficient).
    init(file: CFile, width: Int, height: Int, quality: Int = 85, orientation: ExifOrientation = .up,
         componentScans: Bool = false) throws(ImageError) {
        self.file = file
        self.width = width
        state = .allocate(capacity: 1)
        let exif = orientation == .up ? [] : orientation.app1Payload
        let started = exif.withUnsafeBufferPointer { buffer in
            rd_jpeg_encoder_start_scans(state, file.handle, UInt32(width), UInt32(height), Int32(quality),
                                        buffer.baseAddress, UInt32(buffer.count), componentScans ? 1 : 0)
        }
        guard started == 1 else {
            // deinit closes and frees the state: a class whose init throws is deinitialized.
            let error = failure()
            throw error
        }
    }

    deinit {
        rd_jpeg_encoder_close(state)
        state.deallocate()
    }

    /// Writes one row of `width * 3` RGB bytes.
    func write(row: UnsafePointer<UInt8>) throws(ImageError) {
        guard rd_jpeg_encoder_write(state, row) == 1 else { throw failure() }
    }

    func finish() throws(ImageError) {
        guard rd_jpeg_encoder_finish(state) == 1 else { throw failure() }
    }

    private func failure() -> ImageError {
        let detail = withUnsafeBytes(of: state.pointee.err.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImageError(file: file.path, reason: "cannot encode JPEG (libjpeg: \(detail))")
    }
}
