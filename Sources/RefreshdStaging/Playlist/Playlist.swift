import RefreshdConfig

/// One staged day as the widget reads it: switch times, asset identifiers and rendition paths
/// (relative to the shared container), never image bytes. Written last, by rename, so a reader
/// sees a whole playlist or none.
public struct Playlist: Sendable, Hashable, Codable {
    public static let currentVersion = 1

    public var version: Int
    public var date: CivilDate
    /// The zone the switch times are read in.
    public var zone: String
    /// A hash of the library listing and the options that made this playlist: staging the same
    /// day again with the same hash changes nothing.
    public var manifest: String
    public var entries: [Entry]
    /// Lines for people: a library too small for the window, assets skipped and why.
    public var notes: [String]

    /// One switch: from `at` (the day's `time` in `zone`) the widget shows `asset`.
    public struct Entry: Sendable, Hashable, Codable {
        public var time: ClockTime
        public var at: String
        public var asset: String
        /// Family name to the rendition's path, relative to the shared container.
        public var renditions: [String: String]

        public init(time: ClockTime, at: String, asset: String, renditions: [String: String]) {
            self.time = time
            self.at = at
            self.asset = asset
            self.renditions = renditions
        }
    }

    public init(date: CivilDate, zone: String, manifest: String, entries: [Entry], notes: [String]) {
        self.version = Playlist.currentVersion
        self.date = date
        self.zone = zone
        self.manifest = manifest
        self.entries = entries
        self.notes = notes
    }
}
