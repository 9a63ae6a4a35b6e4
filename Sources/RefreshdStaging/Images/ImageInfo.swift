/// What a probe learns from an image's header alone: format, stored size, EXIF orientation, and
/// the two layouts that cannot be decoded row by row at reduced cost (progressive JPEG keeps every
/// coefficient; interlaced PNG needs the whole image).
public struct ImageInfo: Sendable, Hashable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var orientation: ExifOrientation
    public var isProgressive: Bool
    public var isInterlaced: Bool
    /// A sequential JPEG whose first scan does not cover every component (non-interleaved
    /// scans): libjpeg keeps every coefficient, as for a progressive one.
    public var isMultiScan = false
    /// The bytes libjpeg's whole-image coefficient array takes (progressive or multi-scan; 0
    /// otherwise): about 2 bytes per component sample, at full size whatever the DCT scale.
    public var coefficientBytes = 0

    public init(format: ImageFormat, width: Int, height: Int, orientation: ExifOrientation, isProgressive: Bool,
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
    public var displayWidth: Int { orientation.swapsAxes ? height : width }
    public var displayHeight: Int { orientation.swapsAxes ? width : height }
}
