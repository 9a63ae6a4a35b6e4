import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdStaging

/// `provider: playlist`: the built-in timeline provider that reads the staged wallpaper playlist
/// from the shared container (see `PlaylistTimeline`), run in process for each family. Each
/// family's timeline names only its own rendition: `{"asset", "rendition", "fallback"}`.
enum PlaylistProvider {
    static let name = "playlist"

    static func spec(zone: String, policy: PlaylistTimeline.Policy = .atEnd, folder: String = "wallpaper") -> ActionSpec {
        ActionSpec(name: name, fingerprint: "zone=\(zone)\npolicy=\(policy.rawValue)\nfolder=\(folder)") {
            BuiltInAction(name: name) { context in
                guard let container = context.sharedContainer else {
                    return ActionResult(success: false, log: ["no shared container to read the playlist from"])
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
                } catch {
                    return ActionResult(success: false, log: ["no timeline: \(error)"])
                }
            }
        }
    }
}
