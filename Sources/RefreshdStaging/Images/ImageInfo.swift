/// What a probe learns from an image's header alone: format, stored size, EXIF orientation, and
/// the two layouts that cannot be decoded row by row at reduced cost (progressive JPEG keeps every
/// coefficient; interlaced PNG needs the whole image).
package struct ImageInfo: Sendable, Hashable {
    package var format: ImageFormat
    package var width: Int
    package var height: Int
    package var orientation: ExifOrientation
    package var isProgressive: Bool
    package var isInterlaced: Bool
    /// A sequential JPEG whose first scan does not cover every component (non-interleaved
    /// scans): libjpeg keeps every coefficient, as for a progressive one.
    package var isMultiScan = false
    /// The bytes libjpeg's whole-image coefficient array takes (progressive or multi-scan; 0
    /// otherwise): about 2 bytes per component sample, at full size whatever the DCT scale.
    package var coefficientBytes = 0

    package init(format: ImageFormat, width: Int, height: Int, orientation: ExifOrientation, isProgressive: Bool,
                isInterlaced: Bool, isMultiScan: Bool = false, coefficientBytes: Int = 0) {
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.isProgressive = isProgressive
        self.isInterlaced = isInterlaced
        self.isMultiScan = isMultiScan
        self.coefficientBytes = coefficientBytes
    }

    /// The size as shown, after the orientation is applied.
    package var displayWidth: Int { orientation.swapsAxes ? height : width }
    package var displayHeight: Int { orientation.swapsAxes ? width : height }
}
