import Foundation
import RefreshdCore

/// One staging run: chooses the day's assets, writes their renditions and then the playlist
/// into the shared container, and removes what is past the retention window.
///
/// Atomic (every file through `StagingWriter`, the playlist renamed last), idempotent (a day
/// already staged with the same manifest is left alone), and resumable: `isExpired` is checked
/// before every file, and a run cut short leaves renditions the next one reuses. The current
/// instant is given (the run's start), never read.
public struct PlaylistStager: Sendable {
    public var options: StageOptions
    /// Called after every write step with its number; returning false stops the run there.
    public var afterWriteStep: (@Sendable (Int) -> Bool)?

    public init(options: StageOptions, afterWriteStep: (@Sendable (Int) -> Bool)? = nil) {
        self.options = options
        self.afterWriteStep = afterWriteStep
    }

    /// The day `options.day` names for a run starting at `now`.
    public func stagedDate(now: Instant) -> CivilDate? {
        guard let calendar = ZoneCalendar(identifier: options.zone) else { return nil }
        switch options.day {
        case .today: return calendar.date(of: now)
        case .tomorrow: return calendar.date(of: now).adding(days: 1)
        case let .date(date): return date
        }
    }

    public func run(container: String, now: Instant, isExpired: () -> Bool) -> StageReport {
        let writer = StagingWriter(afterStep: afterWriteStep)
        var report = StageReport(outcome: .failed, date: nil, log: [], results: [], steps: 0,
                                 renditionsWritten: 0, renditionsReused: 0)
        do {
            try stage(container: container, now: now, isExpired: isExpired, writer: writer, report: &report)
        } catch let stopped as StagingWriter.Stopped {
            report.outcome = .stopped
            report.log.append("stopped by the test hook after write step \(stopped.step)")
        } catch {
            report.outcome = .failed
            report.log.append("staging failed: \(error)")
        }
        report.steps = writer.steps
        return report
    }

    private struct LibraryAsset {
        var name: String
        var path: String
    }

    private func stage(container: String, now: Instant, isExpired: () -> Bool, writer: StagingWriter,
                       report: inout StageReport) throws {
        let problems = options.problems()
        guard problems.isEmpty, let calendar = ZoneCalendar(identifier: options.zone), let date = stagedDate(now: now) else {
            throw StagingFailure("invalid options: " + problems.joined(separator: "; "))
        }
        report.date = date
        let layout = ContainerLayout(container: container, folder: options.folder)
        let files = FileManager.default
        let library = try listLibrary()
        let manifest = manifestHash(date: date, library: library)

        if let existing = readPlaylist(layout.playlistPath(date)), existing.manifest == manifest,
           existing.entries.allSatisfy({ $0.renditions.values.allSatisfy { files.fileExists(atPath: layout.absolute($0)) } }) {
            // A run stopped after the rename may have left superseded files: removing them is the
            // only write an already staged day can cause.
            try removeExpired(layout: layout, date: date, writer: writer)
            report.outcome = .alreadyStaged
            report.log.append("playlist for \(date) already staged (manifest \(manifest)); nothing staged")
            report.results = [reloadLine()]
            return
        }
        if isExpired() { return expired(&report, date: date) }

        for directory in [layout.playlists, layout.renditions] {
            do {
                try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw StagingFailure("\(directory): cannot create: \(error.localizedDescription)")
            }
        }
        var history: [CivilDate: [String]] = [:]
        for back in 1...max(1, options.noRepeatDays) where options.noRepeatDays > 0 {
            let day = date.adding(days: -back)
            if let playlist = readPlaylist(layout.playlistPath(day)) { history[day] = playlist.entries.map(\.asset) }
        }
        let selector = PlaylistSelector(seed: options.seed, assetsPerDay: options.assetsPerDay, noRepeatDays: options.noRepeatDays)
        let ranking = selector.rank(library: library.map(\.name), date: date, history: history)
        let paths = Dictionary(library.map { ($0.name, $0.path) }, uniquingKeysWith: { a, _ in a })

        let folder = layout.renditionFolder(date, manifest: manifest)
        let absoluteFolder = layout.absolute(folder)
        do {
            try files.createDirectory(atPath: absoluteFolder, withIntermediateDirectories: true)
        } catch {
            throw StagingFailure("\(absoluteFolder): cannot create: \(error.localizedDescription)")
        }

        var chosen: [(asset: String, renditions: [String: String])] = []
        var notes: [String] = []
        var repeated = 0
        candidates: for (rank, asset) in ranking.order.enumerated() where chosen.count < options.assetsPerDay {
            guard let source = paths[asset] else { continue }
            var renditions: [String: String] = [:]
            for family in options.families {
                if isExpired() { return expired(&report, date: date) }
                let relative = folder + "/" + ContainerLayout.renditionName(asset: asset, family: family.name)
                let target = layout.absolute(relative)
                if let info = try? RenditionRenderer.probe(target), info.width == family.pixelWidth,
                   info.height == family.pixelHeight {
                    report.renditionsReused += 1
                } else {
                    do {
                        try writer.write(target) { temporary in
                            try RenditionRenderer.render(source: source, to: temporary, width: family.pixelWidth,
                                                         height: family.pixelHeight, memoryCeiling: options.memoryCeiling,
                                                         quality: options.quality)
                        }
                        report.renditionsWritten += 1
                    } catch let error as ImageError {
                        let line = "skipped \(asset): \(error.reason)"
                        report.log.append("\(source): skipped: \(error.reason)")
                        notes.append(line)
                        continue candidates
                    }
                }
                renditions[family.name] = relative
            }
            if rank >= ranking.freshCount { repeated += 1 }
            chosen.append((asset, renditions))
        }
        guard !chosen.isEmpty else {
            throw StagingFailure("no asset of \(options.library) could be staged for \(date)")
        }
        if repeated > 0, let shortage = ranking.shortage { notes.insert(shortage, at: 0) }
        if chosen.count < options.assetsPerDay {
            notes.append("only \(chosen.count) of \(options.assetsPerDay) assets could be staged; they repeat through the day")
        }
        report.log += notes.filter { !$0.hasPrefix("skipped ") }

        let entries = options.switchTimes.sorted().enumerated().map { index, time in
            let pick = chosen[index % chosen.count]
            return Playlist.Entry(time: time, at: calendar.instant(of: date, at: time).iso8601, asset: pick.asset,
                                  renditions: pick.renditions)
        }
        let playlist = Playlist(date: date, zone: options.zone, manifest: manifest, entries: entries, notes: notes)
        if isExpired() { return expired(&report, date: date) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        try writer.write(layout.playlistPath(date), data: try encoder.encode(playlist))

        try removeExpired(layout: layout, date: date, writer: writer)
        report.outcome = .staged
        report.log.append("staged \(date): \(chosen.count) assets x \(options.families.count) families, "
            + "\(report.renditionsWritten) renditions written, \(report.renditionsReused) reused")
        report.results = [reloadLine()]
    }

    private func expired(_ report: inout StageReport, date: CivilDate) {
        report.outcome = .expired
        report.log.append("expired while staging \(date) after \(report.renditionsWritten) renditions written "
            + "(\(report.renditionsReused) reused); the container is unchanged otherwise and the next run continues")
    }

    /// `{"reloadTimelines": KIND}`.
    func reloadLine() -> String {
        let data = (try? JSONEncoder().encode(["reloadTimelines": options.widgetKind])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private func listLibrary() throws -> [LibraryAsset] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: options.library)
        } catch {
            throw StagingFailure("library \(options.library): cannot read: \(error.localizedDescription)")
        }
        let assets = names.filter { name in
            let lower = name.lowercased()
            return !name.hasPrefix(".") && (lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") || lower.hasSuffix(".png"))
        }.sorted().map { LibraryAsset(name: $0, path: (options.library as NSString).appendingPathComponent($0)) }
        guard !assets.isEmpty else {
            throw StagingFailure("library \(options.library) has no .jpg, .jpeg or .png files")
        }
        return assets
    }

    private func manifestHash(date: CivilDate, library: [LibraryAsset]) -> String {
        var hash = ManifestHash()
        hash.add("v1")
        hash.add(date.description)
        for asset in library {
            var status = stat()
            let found = stat(asset.path, &status) == 0
            hash.add(asset.name)
            hash.add(found ? "\(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)" : "missing")
        }
        for family in options.families { hash.add("\(family.name) \(family.pixelWidth)x\(family.pixelHeight)") }
        hash.add(options.switchTimes.sorted().map(\.description).joined(separator: " "))
        hash.add(options.zone)
        hash.add("\(options.assetsPerDay) \(options.noRepeatDays) \(options.seed) \(options.memoryCeiling) \(options.quality)")
        return hash.hex
    }

    /// Removes playlists older than the retention window, then rendition folders no remaining
    /// playlist names (superseded manifests, abandoned runs), then stray temporary files.
    private func removeExpired(layout: ContainerLayout, date: CivilDate, writer: StagingWriter) throws {
        let files = FileManager.default
        let oldest = date.adding(days: -options.retentionDays)
        var referenced = Set<String>()
        for name in ((try? files.contentsOfDirectory(atPath: layout.playlists)) ?? []).sorted() {
            let path = layout.playlists + "/" + name
            if name.hasPrefix(".tmp-") {
                try writer.remove(path)
                continue
            }
            guard let day = ContainerLayout.date(ofPlaylistFile: name) else { continue }
            if day < oldest {
                try writer.remove(path)
            } else if let playlist = readPlaylist(path) {
                for entry in playlist.entries {
                    for relative in entry.renditions.values {
                        referenced.insert((relative as NSString).deletingLastPathComponent)
                    }
                }
            } else {
                // Unreadable: keep every folder of its day rather than guess.
                referenced.insert(layout.renditionFolder(day, manifest: "*"))
            }
        }
        for name in ((try? files.contentsOfDirectory(atPath: layout.renditions)) ?? []).sorted() {
            let relative = "\(options.folder)/renditions/\(name)"
            let keptDay = referenced.contains { $0.hasSuffix("-*") && relative.hasPrefix(String($0.dropLast(1))) }
            if !referenced.contains(relative) && !keptDay { try writer.remove(layout.renditions + "/" + name) }
        }
    }

    private func readPlaylist(_ path: String) -> Playlist? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Playlist.self, from: data)
    }
}
