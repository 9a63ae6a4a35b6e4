import RefreshdCore

/// The display size staging renders one widget family at: points times scale is the rendition's
/// pixel size. The family is WidgetKit's (`RefreshdCore.WidgetFamily`); only the size is staging's.
package struct RenditionSize: Sendable, Hashable, Codable {
    package var family: WidgetFamily
    package var widthPoints: Double
    package var heightPoints: Double
    package var scale: Double

    package init(_ family: WidgetFamily, widthPoints: Double, heightPoints: Double, scale: Double) {
        self.family = family
        self.widthPoints = widthPoints
        self.heightPoints = heightPoints
        self.scale = scale
    }

    /// The family's name in file names, playlists and timelines (`systemMedium`).
    package var name: String { family.rawValue }
    package var pixelWidth: Int { Int((widthPoints * scale).rounded()) }
    package var pixelHeight: Int { Int((heightPoints * scale).rounded()) }

    /// A family's size on a large iPhone at 3x (systemExtraLarge: an iPad's, at 2x), the default
    /// when a job file names the family without a size: systemSmall 510x510 px, systemMedium
    /// 1080x510, systemLarge 1080x1137.
    package static func standard(_ family: WidgetFamily) -> RenditionSize {
        switch family {
        case .systemSmall: RenditionSize(family, widthPoints: 170, heightPoints: 170, scale: 3)
        case .systemMedium: RenditionSize(family, widthPoints: 360, heightPoints: 170, scale: 3)
        case .systemLarge: RenditionSize(family, widthPoints: 360, heightPoints: 379, scale: 3)
        case .systemExtraLarge: RenditionSize(family, widthPoints: 715, heightPoints: 338, scale: 2)
        case .accessoryRectangular: RenditionSize(family, widthPoints: 172, heightPoints: 76, scale: 3)
        case .accessoryCircular: RenditionSize(family, widthPoints: 76, heightPoints: 76, scale: 3)
        case .accessoryInline: RenditionSize(family, widthPoints: 257, heightPoints: 26, scale: 3)
        }
    }
}
