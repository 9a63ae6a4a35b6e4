import Foundation

/// Everything the `stage-playlist` action is told, typed (the job file's `options:` map to this).
package struct StageOptions: Sendable, Hashable, Codable {
    /// Which day to stage, relative to the run's start in `zone`.
    package enum Day: Sendable, Hashable, Codable {
        case today
        case tomorrow
        case date(CivilDate)
    }

    /// The wallpaper library: a folder of `.jpg`, `.jpeg` and `.png` files (hidden files ignored).
    package var library: String
    /// The folder under the shared container that holds `playlists/` and `renditions/`.
    package var folder: String = "wallpaper"
    package var switchTimes: [ClockTime]
    /// The IANA zone the switch times and days are read in.
    package var zone: String
    /// Distinct assets a day shows, 1 to the number of switch times (the switches cycle them).
    package var assetsPerDay: Int
    /// No asset shown on the previous N days is chosen while fresh ones remain.
    package var noRepeatDays: Int = 7
    package var families: [RenditionSize]
    package var seed: UInt64 = 1
    /// The widget kind asked to reload once a playlist is staged. A template's may hold its
    /// placeholders (`wallpaper-{user}`); an instance's run has them filled with its values as
    /// they are, and reloads the kind they make (`InstanceKind.form`, see `PlaylistStager.reloadLine`).
    package var widgetKind: String
    /// Playlists older than this many days before the staged day are removed with their renditions.
    package var retentionDays: Int = 7
    /// The widget's memory ceiling: an asset whose rendition would need more is refused.
    package var memoryCeiling: Int = 30 * 1_048_576
    package var day: Day = .tomorrow
    /// With `day: tomorrow`, also stage today first when today has no playlist (a first run, or
    /// a night that was missed), so the widget has today's wallpapers, not a fallback.
    package var todayIfMissing = false
    package var quality: Int = StageOptions.defaultQuality
    /// The most pixels a source image may have: decoding costs CPU in proportion (a 40000x40000
    /// PNG of zeros is a 4.7 MB file and about 15 s of CPU a family), so larger ones are refused
    /// before decoding. 120 megapixels admits every camera photo.
    package var maxSourcePixels: Int = 120_000_000
    /// What to do with a library entry that is a symlink to a file outside the library.
    package var librarySymlinks: LibrarySymlinks = .refuse

    /// A library entry that is a symlink resolving outside the library folder is skipped with a
    /// logged reason (`refuse`, the default: a library is the user's folder of pictures, and a
    /// link out of it, e.g. to another user's file, would be decoded and published to every
    /// reader of the container) or used like any file (`follow`). Links inside it are followed.
    package enum LibrarySymlinks: String, Sendable, Hashable, Codable, CaseIterable {
        case refuse
        case follow
    }

    /// The JPEG quality of renditions when the job file names none.
    package static let defaultQuality = 85

    package init(library: String, switchTimes: [ClockTime], zone: String, assetsPerDay: Int,
                families: [RenditionSize], widgetKind: String) {
        self.library = library
        self.switchTimes = switchTimes
        self.zone = zone
        self.assetsPerDay = assetsPerDay
        self.families = families
        self.widgetKind = widgetKind
    }

    /// Every option, one `name=value` line each in a fixed order: equal texts are equal options,
    /// so a job whose text changed is a changed job on reload.
    package var canonicalText: String {
        let dayText = switch day {
        case .today: "today"
        case .tomorrow: "tomorrow"
        case let .date(date): date.description
        }
        let sizes = families.map { "\($0.name) \($0.widthPoints)x\($0.heightPoints)@\($0.scale)" }
        return [
            "library=\(library)", "folder=\(folder)", "switch-times=\(switchTimes.map(\.description).joined(separator: ","))",
            "timezone=\(zone)", "assets-per-day=\(assetsPerDay)", "no-repeat-days=\(noRepeatDays)",
            "families=\(sizes.joined(separator: ","))", "seed=\(seed)", "widget=\(widgetKind)",
            "retention-days=\(retentionDays)", "memory-ceiling=\(memoryCeiling)", "day=\(dayText)",
            "today-if-missing=\(todayIfMissing)", "quality=\(quality)",
            "max-source-pixels=\(maxSourcePixels)", "library-symlinks=\(librarySymlinks.rawValue)",
        ].joined(separator: "\n")
    }

    /// What is wrong with these options, one line each naming the option and what was expected;
    /// empty when they can be used.
    package func problems() -> [String] {
        var problems: [String] = []
        if library.isEmpty { problems.append("library: expected the path of a folder of images") }
        if folder.isEmpty || folder.contains("/") || folder.hasPrefix(".") || folder.utf8.contains(0) {
            problems.append("folder: expected one folder name (no '/', not hidden), found \"\(folder)\"")
        }
        if switchTimes.isEmpty { problems.append("switch-times: expected at least one time like 06:00") }
        if Set(switchTimes).count != switchTimes.count { problems.append("switch-times: each time at most once") }
        if TimeZone(identifier: zone) == nil { problems.append("timezone: unknown zone \"\(zone)\"") }
        if assetsPerDay < 1 || assetsPerDay > max(1, switchTimes.count) {
            problems.append("assets-per-day: expected 1 to \(max(1, switchTimes.count)) (the switch times), found \(assetsPerDay)")
        }
        if noRepeatDays < 0 || noRepeatDays > 366 { problems.append("no-repeat-days: expected 0 to 366, found \(noRepeatDays)") }
        if retentionDays < max(1, noRepeatDays) || retentionDays > 3660 {
            problems.append("retention-days: expected \(max(1, noRepeatDays)) (the no-repeat window, whose playlists it reads) to 3660, found \(retentionDays)")
        }
        if families.isEmpty { problems.append("families: expected at least one widget family") }
        var names = Set<String>()
        for family in families {
            if !names.insert(family.name).inserted { problems.append("families: \(family.name) given twice") }
            let w = family.widthPoints * family.scale, h = family.heightPoints * family.scale
            if !(w >= 1 && w <= 16_384 && h >= 1 && h <= 16_384) {
                problems.append("families: \(family.name): expected 1 to 16384 pixels a side (points x scale)")
            } else if family.pixelWidth * family.pixelHeight * 4 > memoryCeiling {
                problems.append("families: \(family.name): a \(family.pixelWidth)x\(family.pixelHeight) rendition needs "
                    + "\(StageOptions.megabytes(family.pixelWidth * family.pixelHeight * 4)), over the memory ceiling of "
                    + StageOptions.megabytes(memoryCeiling))
            }
        }
        if widgetKind.isEmpty { problems.append("widget-kind: expected the kind of the widget to reload") }
        if memoryCeiling < 1 { problems.append("memory-ceiling: expected a positive number of bytes") }
        if maxSourcePixels < 1 { problems.append("max-source-pixels: expected a positive number of pixels, found \(maxSourcePixels)") }
        if !(1...100).contains(quality) { problems.append("quality: expected 1 to 100, found \(quality)") }
        return problems
    }

    /// `bytes` in MiB with one decimal, for messages (`30.0 MiB`); no `Int` overflows it.
    package static func megabytes(_ bytes: Int) -> String {
        let tenths = bytes / 1_048_576 * 10 + (bytes % 1_048_576 * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
