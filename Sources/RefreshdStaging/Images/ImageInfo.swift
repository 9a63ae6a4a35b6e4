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

    /// The size as shown, after the orientation is applied.
    public var displayWidth: Int { orientation.swapsAxes ? height : width }
    public var displayHeight: Int { orientation.swapsAxes ? width : height }
}
