import CJPEG

/// Writes a baseline RGB JPEG row by row through libjpeg-turbo, optionally with an EXIF
/// orientation (the sample library stores some images sideways, as cameras do).
final class JPEGEncoder {
    private let file: CFile
    private let state: UnsafeMutablePointer<rd_jpeg_encoder>
    /// The scan script libjpeg reads until the encoder is done.
    private let script: UnsafeMutableBufferPointer<jpeg_scan_info>
    let width: Int

    /// How the scans of a test file are laid out.
    enum ScanLayout {
        /// Interleaved baseline scans (what cameras write).
        case interleaved
        /// One sequential scan per component: a decoder keeps every coefficient.
        case perComponent
        /// Progressive, one scan per AC coefficient and per refinement bit of each component:
        /// 379 scans.
        case manyProgressive
    }

    init(file: CFile, width: Int, height: Int, quality: Int = 85, orientation: ExifOrientation = .up,
         scans: ScanLayout = .interleaved) throws(ImageError) {
        self.file = file
        self.width = width
        state = .allocate(capacity: 1)
        let layout = JPEGEncoder.script(scans)
        script = .allocate(capacity: max(1, layout.count))
        _ = script.initialize(from: layout)
        let exif = orientation == .up ? [] : orientation.app1Payload
        let started = exif.withUnsafeBufferPointer { buffer in
            rd_jpeg_encoder_start_scans(state, file.handle, UInt32(width), UInt32(height), Int32(quality),
                                        buffer.baseAddress, UInt32(buffer.count), script.baseAddress, Int32(layout.count))
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
        script.deallocate()
    }

    static func script(_ layout: ScanLayout) -> [jpeg_scan_info] {
        func scan(_ component: Int32?, _ ss: Int32, _ se: Int32, _ ah: Int32, _ al: Int32) -> jpeg_scan_info {
            var info = jpeg_scan_info()
            if let component {
                info.comps_in_scan = 1
                info.component_index.0 = component
            } else {
                info.comps_in_scan = 3
                info.component_index = (0, 1, 2, 0)
            }
            info.Ss = ss; info.Se = se; info.Ah = ah; info.Al = al
            return info
        }
        switch layout {
        case .interleaved:
            return []
        case .perComponent:
            return (0..<3).map { scan($0, 0, 63, 0, 0) }
        case .manyProgressive:
            var scans = [scan(nil, 0, 0, 0, 0)]
            for component in Int32(0)..<3 {
                for k in Int32(1)...63 { scans.append(scan(component, k, k, 0, 1)) }
                for k in Int32(1)...63 { scans.append(scan(component, k, k, 1, 0)) }
            }
            return scans
        }
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
