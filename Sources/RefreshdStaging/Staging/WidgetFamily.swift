/// A widget family's display size: points times scale is the rendition's pixel size.
public struct WidgetFamily: Sendable, Hashable, Codable {
    /// A name for file names and timelines, e.g. `systemMedium` (letters, digits, `-`, `_`).
    public var name: String
    public var widthPoints: Double
    public var heightPoints: Double
    public var scale: Double

    public init(name: String, widthPoints: Double, heightPoints: Double, scale: Double) {
        self.name = name
        self.widthPoints = widthPoints
        self.heightPoints = heightPoints
        self.scale = scale
    }

    public var pixelWidth: Int { Int((widthPoints * scale).rounded()) }
    public var pixelHeight: Int { Int((heightPoints * scale).rounded()) }

    /// iPhone Pro sizes at 3x: 510x510, 1080x510 and 1080x1137 pixels.
    public static let systemSmall = WidgetFamily(name: "systemSmall", widthPoints: 170, heightPoints: 170, scale: 3)
    public static let systemMedium = WidgetFamily(name: "systemMedium", widthPoints: 360, heightPoints: 170, scale: 3)
    public static let systemLarge = WidgetFamily(name: "systemLarge", widthPoints: 360, heightPoints: 379, scale: 3)
}
