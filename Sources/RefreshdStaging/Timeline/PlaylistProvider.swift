import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// `provider: playlist`: the built-in timeline provider that reads the staged wallpaper playlist
/// from the shared container (see `PlaylistTimeline`), run in process for each family. Each
/// family's timeline names only its own rendition: `{"asset", "rendition", "fallback"}`. With no
/// playlist staged at all (before the first staging run) it writes `{"waiting": REASON}`.
package enum PlaylistProvider {
    package static let name = ActionSpec.playlistProviderName

    /// The provider a job's `ActionSpec.playlistProvider(zone:policy:folder:)` names (its payload
    /// is the `key=value` lines; an unknown policy is `atEnd`, as the job file's check allows no other).
    package static func action(_ spec: ActionSpec) -> BuiltInAction {
        var fields: [String: String] = [:]
        for line in spec.payload.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return action(zone: fields["zone"] ?? "UTC", policy: fields["policy"].flatMap(PlaylistTimeline.Policy.init(rawValue:)) ?? .atEnd,
                      folder: fields["folder"] ?? "wallpaper")
    }

    package static func action(zone: String, policy: PlaylistTimeline.Policy = .atEnd, folder: String = "wallpaper") -> BuiltInAction {
        BuiltInAction(name: name) { context in
            guard let container = context.sharedContainer else {
                return ActionResult(success: false, log: ["no shared container to read the playlist from"])
            }
            // One folder name under the container (the configuration and, for an instance's
            // values, the core refuse any other): checked again where the path is made.
            guard !folder.isEmpty, !folder.utf8.contains(UInt8(ascii: "/")), !folder.utf8.contains(0),
                  folder.utf8.first != UInt8(ascii: ".") else {
                return ActionResult(success: false, log: ["folder \(EchoText.quoted(folder, limit: 80)) is not one folder name "
                    + "under the shared container; expected no '/', not beginning with '.'"])
            }
            let identifier = context.order.identifier
            guard let family = WidgetSpec.family(ofProviderIdentifier: identifier).flatMap(WidgetFamily.init(rawValue:)) else {
                return ActionResult(success: false, log: ["\(identifier): not a widget family's provider run"])
            }
            do {
                let provider = PlaylistTimeline(container: container, folder: folder, zone: zone, policy: policy)
                let staged = try provider.timeline(for: family, now: context.order.started)
                var log: [String] = []
                if let fallback = staged.fallback { log.append("today's playlist is missing: showing the one staged for \(fallback)") }
                return ActionResult(success: true, results: [staged.jsonLine], log: log)
            } catch let error as PlaylistTimeline.Unavailable where error.nothingStaged {
                // Before the first staging run: the widget waits (not a failure, nothing
                // stale); the staging run's reload of the widget brings the first entries.
                return ActionResult(success: true, results: [waitingLine(error.description)])
            } catch {
                return ActionResult(success: false, log: ["no timeline: \(error)"])
            }
        }
    }

    /// The results line of a provider with nothing staged yet: `{"waiting": "no playlist staged yet in
    /// PATH"}`.
    static func waitingLine(_ detail: String) -> String {
        let text = detail
        let data = (try? JSONSerialization.data(withJSONObject: ["waiting": text], options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
