import RefreshdConfig

/// Where staging puts things under the shared container:
///
///     <container>/<folder>/playlists/2026-11-24.json
///     <container>/<folder>/renditions/2026-11-24-<manifest>/<asset>-<hash>.<family>.jpg
///
/// A rendition folder is named by its day and manifest, so a run cut short is continued by the
/// next one with the same manifest, and a changed library starts a fresh folder while the old
/// playlist still names the old one. Temporary files start with `.tmp-`.
package struct ContainerLayout: Sendable, Hashable {
    package var container: String
    package var folder: String

    package init(container: String, folder: String) {
        self.container = container
        self.folder = folder
    }

    package var root: String { join(container, folder) }
    package var playlists: String { join(root, "playlists") }
    package var renditions: String { join(root, "renditions") }

    package func playlistPath(_ date: CivilDate) -> String { join(playlists, "\(date).json") }

    /// The rendition folder for a day and manifest, relative to the container.
    package func renditionFolder(_ date: CivilDate, manifest: String) -> String {
        "\(folder)/renditions/\(date)-\(manifest)"
    }

    /// A rendition's file name: the asset's name made safe, a hash of the real name, the family.
    package static func renditionName(asset: String, family: String) -> String {
        let safe = String(asset.unicodeScalars.prefix(80).map { c -> Character in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_" || c == ".")
                ? Character(c) : "_"
        })
        return "\(safe)-\(ManifestHash.short(asset)).\(family).jpg"
    }

    /// An absolute path for a path relative to the container.
    package func absolute(_ relative: String) -> String { join(container, relative) }

    /// The day a playlist file is for, from its name.
    package static func date(ofPlaylistFile name: String) -> CivilDate? {
        guard name.hasSuffix(".json"), !name.hasPrefix(".") else { return nil }
        return CivilDate(String(name.dropLast(5)))
    }

    private func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }
}
