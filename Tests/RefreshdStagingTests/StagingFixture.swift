import Foundation
import RefreshdConfig
import RefreshdCore
@testable import RefreshdStaging

/// A library of small images and options to stage it, in a temporary directory.
struct StagingFixture {
    let dir = TemporaryDirectory()
    let library: String
    let container: String
    var options: StageOptions
    /// 2026-11-23T10:00Z: the run's start; tomorrow in Paris is 2026-11-24.
    let now = ISO8601.parse("2026-11-23T10:00:00Z") ?? Instant(milliseconds: 0)
    let tomorrow = CivilDate("2026-11-24") ?? CivilDate(dayNumber: 0)

    init(images: Int = 6) throws {
        library = dir.folder("library")
        container = dir.folder("shared")
        for i in 0..<images {
            let png = i == images - 1
            try dir.image(png ? "img\(i).png" : "img\(i).jpg", width: 320, height: 200, format: png ? .png : .jpeg,
                          orientation: i == 1 ? .right : .up, seed: i, in: library)
        }
        options = StageOptions(library: library, switchTimes: ["06:00", "12:00", "18:00", "22:00"].compactMap(ClockTime.init),
                               zone: "Europe/Paris", assetsPerDay: 4,
                               families: [RenditionSize(.systemSmall, widthPoints: 40, heightPoints: 40, scale: 2),
                                          RenditionSize(.systemMedium, widthPoints: 90, heightPoints: 40, scale: 2),
                                          RenditionSize(.systemLarge, widthPoints: 90, heightPoints: 95, scale: 2)],
                               widgetKind: "example.wallpaper")
        options.noRepeatDays = 2
        options.retentionDays = 3
    }

    var layout: ContainerLayout { ContainerLayout(container: container, folder: options.folder) }

    func stage(_ options: StageOptions? = nil, now: Instant? = nil, afterWriteStep: (@Sendable (Int) -> Bool)? = nil,
               isExpired: () -> Bool = { false }) -> StageReport {
        PlaylistStager(options: options ?? self.options, afterWriteStep: afterWriteStep)
            .run(container: container, now: now ?? self.now, isExpired: isExpired)
    }

    func playlist(_ date: CivilDate) -> Playlist? {
        guard let data = FileManager.default.contents(atPath: layout.playlistPath(date)) else { return nil }
        return try? JSONDecoder().decode(Playlist.self, from: data)
    }

    func playlistDates() -> [CivilDate] {
        ((try? FileManager.default.contentsOfDirectory(atPath: layout.playlists)) ?? [])
            .compactMap(ContainerLayout.date(ofPlaylistFile:)).sorted()
    }

    func renditionFolders() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: layout.renditions)) ?? []).sorted()
    }

    /// Problems with the container as a reader sees it: every playlist parses and every
    /// rendition it names exists, decodes and has its family's size. Empty when consistent.
    func inconsistencies() -> [String] {
        var problems: [String] = []
        let sizes = Dictionary(uniqueKeysWithValues: options.families.map { ($0.name, ($0.pixelWidth, $0.pixelHeight)) })
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.playlists)) ?? [] where !name.hasPrefix(".tmp-") {
            guard let data = FileManager.default.contents(atPath: layout.playlists + "/" + name),
                  let playlist = try? JSONDecoder().decode(Playlist.self, from: data) else {
                problems.append("\(name) does not parse")
                continue
            }
            for entry in playlist.entries {
                for (family, path) in entry.renditions {
                    do {
                        let image = try DecodedImage.decode(layout.absolute(path))
                        if let size = sizes[family], (image.width, image.height) != size {
                            problems.append("\(path) is \(image.width)x\(image.height)")
                        }
                    } catch {
                        problems.append("\(name): \(error)")
                    }
                }
            }
        }
        return problems
    }

    /// Temporary files left anywhere under the container.
    func temporaryFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: container)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if (path as NSString).lastPathComponent.hasPrefix(".tmp-") { found.append(path) }
        }
        return found
    }
}
