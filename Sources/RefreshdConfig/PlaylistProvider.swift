import Foundation
import RefreshdRuntime
import RefreshdStaging

/// `provider: playlist`: the built-in timeline provider that reads the staged wallpaper playlist
/// from the shared container (see `PlaylistTimeline`), run in process for each family.
enum PlaylistProvider {
    static let name = "playlist"

    static func spec(zone: String) -> ActionSpec {
        ActionSpec(name: name, fingerprint: "zone=\(zone)") {
            BuiltInAction(name: name) { context in
                guard let container = context.sharedContainer else {
                    return ActionResult(success: false, log: ["no shared container to read the playlist from"])
                }
                do {
                    let timeline = try PlaylistTimeline(container: container, zone: zone).timeline(now: context.order.started)
                    var log: [String] = []
                    if let fallback = timeline.fallback { log.append("today's playlist is missing: showing the one staged for \(fallback)") }
                    return ActionResult(success: true, results: [timeline.jsonLine], log: log)
                } catch {
                    return ActionResult(success: false, log: ["no timeline: \(error)"])
                }
            }
        }
    }
}
