import Foundation
import RefreshdCore

/// A modelled `provider: playlist`: the timeline the real provider would read from its folder of
/// the shared container, read from the `ContainerModel`'s days of that folder instead, in the
/// real results vocabulary.
///
/// Today's playlist gives an entry at the start of the day (the evening's last asset) and one at
/// each switch time, content `{"asset": ..., "rendition": ...}`. When today was not staged, the
/// most recent earlier staged day (else the earliest later one) is re-dated to today and every
/// entry carries `"fallback": "YYYY-MM-DD"`. Nothing staged at all: `waitingLine`, as the real
/// provider writes before the first staging run (the widget waits: not a failure, not stale).
struct PlaylistModel: Sendable, Hashable {
    var zone: TimeZone
    /// `after(start of tomorrow)` rather than `atEnd`.
    var afterStartOfTomorrow: Bool
    var folder: String

    /// The model of a `provider: playlist` spec (its fingerprint `zone=...\npolicy=...\nfolder=...`).
    init(fingerprint: String) {
        let fields = SimulatedActions.fields(fingerprint)
        zone = fields["zone"].flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        afterStartOfTomorrow = fields["policy"] == "afterStartOfTomorrow"
        folder = fields["folder"] ?? "wallpaper"
    }

    /// The model of an instance of a `provider: playlist` template: its folder filled with the
    /// instance's values, as the real provider's is (`ActionSpec.filled`).
    func filled(_ values: [String: String]) -> PlaylistModel {
        var model = self
        model.folder = Placeholders.fill(folder, values)
        return model
    }

    /// One family's timeline at `now`.
    struct Timeline: Sendable, Hashable {
        /// Entry dates and their content (compact JSON, sorted keys, as the real provider writes).
        var entries: [(date: Instant, content: String)]
        /// The staged day shown because today's is missing.
        var fallback: String?
        var line: String

        static func == (a: Timeline, b: Timeline) -> Bool { a.line == b.line }
        func hash(into hasher: inout Hasher) { hasher.combine(line) }
    }

    /// The results line before anything was staged, in the real provider's words.
    var waitingLine: String {
        let text = "no playlist staged yet in \(folder)/playlists"
        let data = (try? JSONSerialization.data(withJSONObject: ["waiting": text], options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The timeline of `family` at `now`, or nil when nothing was ever staged.
    func timeline(family: String, at now: Instant, container: ContainerModel) -> Timeline? {
        let today = SimulatedActions.date(of: now, zone: zone)
        let dates = container.stagedDates(folder: folder)
        let chosen: String
        if dates.contains(today) {
            chosen = today
        } else if let earlier = dates.last(where: { $0 < today }) {
            chosen = earlier
        } else if let later = dates.first(where: { $0 > today }) {
            chosen = later
        } else {
            return nil
        }
        guard let day = container.day(chosen, folder: folder), !day.switches.isEmpty else { return nil }
        let fallback = chosen == today ? nil : chosen
        let start = SimulatedActions.startOfDay(today, zone: zone)
        func content(_ asset: String) -> String {
            let rendition = "\(folder)/renditions/\(chosen)/\(asset)-\(family).jpg"
            return "{\"asset\":\"\(asset)\"" + (fallback.map { ",\"fallback\":\"\($0)\"" } ?? "") + ",\"rendition\":\"\(rendition)\"}"
        }
        var entries = zip(day.switches, day.assets).map { (start + .seconds(Int64($0.0) * 60), content($0.1)) }
        if let first = day.switches.first, first != 0, let last = day.assets.last {
            // Before the first switch the widget goes on showing the evening's last asset.
            let yesterday = SimulatedActions.date(of: start, zone: zone, plusDays: -1)
            let evening = fallback == nil ? container.day(yesterday, folder: folder)?.assets.last ?? last : last
            entries.insert((start, content(evening)), at: 0)
        }
        let items = entries.map { "{\"content\":\($0.1),\"date\":\"\($0.0.iso8601)\"}" }
        let policy = afterStartOfTomorrow
            ? "{\"after\":\"\(SimulatedActions.startOfDay(SimulatedActions.date(of: start, zone: zone, plusDays: 1), zone: zone).iso8601)\"}"
            : "\"atEnd\""
        let fallbackText = fallback.map { ",\"fallback\":\"\($0)\"" } ?? ""
        return Timeline(entries: entries, fallback: fallback,
                        line: "{\"entries\":[\(items.joined(separator: ","))]\(fallbackText),\"policy\":\(policy)}")
    }
}
