import CJPEG

/// Reads a JPEG scanline by scanline through libjpeg-turbo, optionally at a reduced DCT scale.
///
/// Opening reads only the header and the APP1 markers (size and EXIF orientation without
/// decoding pixels). `start(scaleNumerator:)` then decodes at n/8 of the full size, so a
/// 4000x2400 photo for a 1080-pixel widget is decoded at 1500x900 and never held whole.
final class JPEGDecoder {
    let path: String
    private let file: CFile
    private let state: UnsafeMutablePointer<rd_jpeg_decoder>

    init(file: CFile) throws(ImageError) {
        self.path = file.path
        self.file = file
        state = .allocate(capacity: 1)
        guard rd_jpeg_decoder_open(state, file.handle) == 1 else {
            // deinit closes and frees the state: a class whose init throws is deinitialized.
            let message = failure("not a readable JPEG")
            throw message
        }
    }

    deinit {
        rd_jpeg_decoder_close(state)
        state.deallocate()
    }

    var width: Int { Int(state.pointee.cinfo.image_width) }
    var height: Int { Int(state.pointee.cinfo.image_height) }
    var isProgressive: Bool { state.pointee.cinfo.progressive_mode != 0 }
    /// A sequential file whose first scan leaves out a component: decoded like a progressive one.
    var isMultiScan: Bool { !isProgressive && rd_jpeg_decoder_buffers_coefficients(state) != 0 }
    /// What libjpeg will allocate to hold every coefficient (0 when it decodes in a stream).
    var coefficientBytes: Int { Int(clamping: rd_jpeg_decoder_coefficient_bytes(state)) }
    var outputWidth: Int { Int(state.pointee.cinfo.output_width) }
    var outputHeight: Int { Int(state.pointee.cinfo.output_height) }

    /// The orientation from the first EXIF APP1 marker, `.up` without one.
    var orientation: ExifOrientation {
        var marker = state.pointee.cinfo.marker_list
        while let current = marker {
            if current.pointee.marker == UInt8(JPEG_APP0 + 1), let data = current.pointee.data {
                let bytes = UnsafeRawBufferPointer(start: data, count: Int(current.pointee.data_length))
                if bytes.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { return ExifOrientation.parse(app1: bytes) }
            }
            marker = current.pointee.next
        }
        return .up
    }

    /// What libjpeg's progress monitor asks (the run's expiration), held by the decoder.
    final class StopCheck {
        var check: (() -> Bool)?
    }

    let stopCheck = StopCheck()
    /// The most scans a file may have: each is a pass over the whole image (a progressive file
    /// has about 10; a crafted one thousands), counted as they are read.
    static let maximumScans = 256

    /// Starts decoding as RGB at `scaleNumerator`/8 of the full size (1...8); libjpeg's large
    /// buffers may not exceed `memoryLimit` bytes (0: no limit of its own). From here on,
    /// libjpeg asks `stopCheck` at every progress step and stops the decode when it says so.
    func start(scaleNumerator: Int, memoryLimit: Int = 0) throws(ImageError) {
        let context = Unmanaged.passUnretained(stopCheck).toOpaque()
        let started = rd_jpeg_decoder_start(state, UInt32(min(max(scaleNumerator, 1), 8)), memoryLimit, { context in
            guard let context else { return 0 }
            return Unmanaged<StopCheck>.fromOpaque(context).takeUnretainedValue().check?() == true ? 1 : 0
        }, context, Int32(JPEGDecoder.maximumScans))
        guard started == 1 else { throw failure("cannot decode") }
    }

    /// Decodes the next scanline into `row` (`outputWidth * 3` bytes).
    func readRow(into row: UnsafeMutablePointer<UInt8>) throws(ImageError) {
        guard rd_jpeg_decoder_read(state, row) == 1 else { throw failure("corrupt or truncated JPEG") }
    }

    /// Reads to the end of the image, so a file cut short after the last row is still noticed.
    func finish() throws(ImageError) {
        guard rd_jpeg_decoder_finish(state) == 1 else { throw failure("corrupt or truncated JPEG") }
    }

    private func failure(_ what: String) -> ImageError {
        if state.pointee.progress.stopped != 0 { return ImageError.expired(path) }
        let detail = withUnsafeBytes(of: state.pointee.err.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImageError(file: path, reason: detail.isEmpty ? what : "\(what) (libjpeg: \(detail))")
    }
}
