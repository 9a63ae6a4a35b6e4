import Foundation
import RefreshdConfig
import RefreshdCore

/// The widget side of staging: the timeline for "now" from the playlists in the shared container.
///
/// Today's playlist gives one entry per switch time (the asset and the family's rendition,
/// relative to the container), plus one at the start of the day showing
/// what the previous evening's last switch showed (so the widget is never blank before the first
/// switch). When today was not staged (staging missed or expired), the most recent earlier
/// playlist is used with its switch times re-dated to today, and `fallback` names it; only when
/// no playlist exists at all is there no timeline. Reads files; takes the instant, never a clock.
package struct PlaylistTimeline: Sendable {
    package enum Policy: String, Sendable, Hashable {
        case atEnd
        case afterStartOfTomorrow
    }

    /// No timeline: nothing staged yet (`nothingStaged`: the widget waits for the first staging
    /// run, which is not a failure), or the zone is unknown.
    package struct Unavailable: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
        package var nothingStaged = false
    }

    package var layout: ContainerLayout
    package var zone: String
    package var policy: Policy

    package init(container: String, folder: String = "wallpaper", zone: String, policy: Policy = .atEnd) {
        layout = ContainerLayout(container: container, folder: folder)
        self.zone = zone
        self.policy = policy
    }

    /// The timeline of `family` at `now`: one entry per switch time with the family's rendition.
    package func timeline(for family: WidgetFamily, now: Instant) throws(Unavailable) -> StagedTimeline {
        guard let calendar = ZoneCalendar(identifier: zone) else { throw Unavailable(description: "unknown zone \"\(zone)\"") }
        let today = calendar.date(of: now)
        let staged = stagedDates()
        let chosen: CivilDate
        if staged.contains(today), readPlaylist(today) != nil {
            chosen = today
        } else if let earlier = staged.filter({ $0 < today && readPlaylist($0) != nil }).max() {
            chosen = earlier
        } else if let later = staged.filter({ $0 > today && readPlaylist($0) != nil }).min() {
            chosen = later
        } else {
            throw Unavailable(description: "no playlist staged yet in \(layout.playlists)", nothingStaged: true)
        }
        guard let playlist = readPlaylist(chosen), !playlist.entries.isEmpty else {
            // Staged, but with no switch: a staging fault, not a day still to come.
            throw Unavailable(description: "the playlist staged for \(chosen) in \(layout.playlists) has no entries")
        }
        let fallback = chosen == today ? nil : chosen
        func entry(_ date: Instant, _ switched: Playlist.Entry) -> TimelineEntry {
            TimelineEntry(date: date, content: StagedTimeline.content(
                asset: switched.asset, rendition: switched.renditions[family.rawValue], fallback: fallback))
        }
        let switches = playlist.entries.sorted { $0.time < $1.time }
        var entries = switches.map { entry(calendar.instant(of: today, at: $0.time), $0) }
        if let first = switches.first, first.time != .midnight {
            // Before the first switch, the widget goes on showing the evening's last asset.
            let evening = (chosen == today ? readPlaylist(today.adding(days: -1)) : nil)?.entries.max { $0.time < $1.time }
                ?? switches[switches.count - 1]
            entries.insert(entry(calendar.start(of: today), evening), at: 0)
        }
        let timelinePolicy: TimelinePolicy = switch policy {
        case .atEnd: .atEnd
        case .afterStartOfTomorrow: .after(calendar.start(of: today.adding(days: 1)))
        }
        return StagedTimeline(timeline: Timeline(entries: entries, policy: timelinePolicy), fallback: fallback)
    }

    private func stagedDates() -> [CivilDate] {
        ((try? FileManager.default.contentsOfDirectory(atPath: layout.playlists)) ?? [])
            .compactMap(ContainerLayout.date(ofPlaylistFile:))
    }

    private func readPlaylist(_ date: CivilDate) -> Playlist? {
        PlaylistFile.read(layout.playlistPath(date))
    }
}
