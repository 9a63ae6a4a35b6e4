import Foundation
import RefreshdCore

/// The built-in actions a job file can name, as data: `action: stage-playlist` with its options,
/// and a timeline's `provider: playlist`. `RefreshdStaging` binds them to code
/// (`StagingActions.binding`); the simulator models them from their fingerprints.
extension ActionSpec {
    /// `action: stage-playlist`.
    package static let stagePlaylistName = "stage-playlist"
    /// A timeline job's `provider: playlist`.
    package static let playlistProviderName = "playlist"

    /// The staging action for these options: its fingerprint is their canonical text, its
    /// payload their JSON (what the action and its worker process decode).
    package static func stagePlaylist(_ options: StageOptions) -> ActionSpec {
        let payload = (try? JSONEncoder().encode(options)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return ActionSpec(name: stagePlaylistName, fingerprint: options.canonicalText, payload: payload)
    }

    /// The playlist provider reading the staged playlists of `folder` in `zone`; `policy` is
    /// `atEnd` or `afterStartOfTomorrow`. Fingerprint and payload are the same `key=value` lines.
    package static func playlistProvider(zone: String, policy: String = "atEnd", folder: String = "wallpaper") -> ActionSpec {
        let text = "zone=\(zone)\npolicy=\(policy)\nfolder=\(folder)"
        return ActionSpec(name: playlistProviderName, fingerprint: text, payload: text)
    }
}
