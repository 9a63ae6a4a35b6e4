import RefreshdConfig

/// One staged day as the widget reads it: switch times, asset identifiers and rendition paths
/// (relative to the shared container), never image bytes. Written last, by rename, so a reader
/// sees a whole playlist or none.
package struct Playlist: Sendable, Hashable, Codable {
    package static let currentVersion = 1

    package var version: Int
    package var date: CivilDate
    /// The zone the switch times are read in.
    package var zone: String
    /// A hash of the library listing and the options that made this playlist: staging the same
    /// day again with the same hash changes nothing.
    package var manifest: String
    package var entries: [Entry]
    /// Lines for people: a library too small for the window, assets skipped and why.
    package var notes: [String]

    /// One switch: from `at` (the day's `time` in `zone`) the widget shows `asset`.
    package struct Entry: Sendable, Hashable, Codable {
        package var time: ClockTime
        package var at: String
        package var asset: String
        /// Family name to the rendition's path, relative to the shared container.
        package var renditions: [String: String]

        package init(time: ClockTime, at: String, asset: String, renditions: [String: String]) {
            self.time = time
            self.at = at
            self.asset = asset
            self.renditions = renditions
        }
    }

    package init(date: CivilDate, zone: String, manifest: String, entries: [Entry], notes: [String]) {
        self.version = Playlist.currentVersion
        self.date = date
        self.zone = zone
        self.manifest = manifest
        self.entries = entries
        self.notes = notes
    }
}
