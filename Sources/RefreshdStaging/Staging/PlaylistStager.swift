import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// One staging run: chooses the day's assets, writes their renditions and then the playlist
/// into the shared container, and removes what is past the retention window.
///
/// Atomic (every file through `StagingWriter`, the playlist renamed last), idempotent (a day
/// already staged with the same manifest is left alone), and resumable: `isExpired` is checked
/// before every file and every few rows of a decode, and a run cut short leaves renditions the
/// next one reuses. Folders of the container are opened without following symlinks, and the
/// retention sweep removes only what `OwnershipRecord` says staging created. The current
/// instant is given (the run's start), never read.
package struct PlaylistStager: Sendable {
    package var options: StageOptions
    /// Called after every write step with its number; returning false stops the run there.
    package var afterWriteStep: (@Sendable (Int) -> Bool)?

    package init(options: StageOptions, afterWriteStep: (@Sendable (Int) -> Bool)? = nil) {
        self.options = options
        self.afterWriteStep = afterWriteStep
    }

    /// The day `options.day` names for a run starting at `now`.
    package func stagedDate(now: Instant) -> CivilDate? {
        guard let calendar = ZoneCalendar(identifier: options.zone) else { return nil }
        switch options.day {
        case .today: return calendar.date(of: now)
        case .tomorrow: return calendar.date(of: now).adding(days: 1)
        case let .date(date): return date
        }
    }

    package func run(container: String, now: Instant, isExpired: () -> Bool) -> StageReport {
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
        /// What is opened to decode it: `path`, or the resolved target of a link kept inside
        /// the library (opened without following links when `library-symlinks: refuse`).
        var source: String? = nil
        var followSymlinks = true
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
        let (library, refused) = try listLibrary()
        report.log += refused
        let manifest = manifestHash(date: date, library: library)
        // Every folder is opened without following symlinks: one planted in the container is
        // refused by name rather than written through.
        let root: AtomicFile.Directory, playlists: AtomicFile.Directory, renditions: AtomicFile.Directory
        do {
            root = try AtomicFile.directory(root: container, relative: options.folder, create: true)
            playlists = try root.subdirectory("playlists", create: true)
            renditions = try root.subdirectory("renditions", create: true)
        } catch {
            throw StagingFailure("\(error)")
        }
        var record = OwnershipRecord.load(root)

        if let existing = readPlaylist(layout.playlistPath(date)), existing.manifest == manifest,
           existing.entries.allSatisfy({ $0.renditions.values.allSatisfy { files.fileExists(atPath: layout.absolute($0)) } }) {
            // A run stopped after the rename may have left superseded files: removing them is the
            // only write an already staged day can cause.
            try removeExpired(layout: layout, date: date, writer: writer, record: &record, root: root,
                              playlists: playlists, renditions: renditions)
            report.outcome = .alreadyStaged
            report.log.append("playlist for \(date) already staged (manifest \(manifest)); nothing staged")
            report.results = [reloadLine()]
            return
        }
        if isExpired() { return expired(&report, date: date) }

        var history: [CivilDate: [String]] = [:]
        for back in 1...max(1, options.noRepeatDays) where options.noRepeatDays > 0 {
            let day = date.adding(days: -back)
            if let playlist = readPlaylist(layout.playlistPath(day)) { history[day] = playlist.entries.map(\.asset) }
        }
        let selector = PlaylistSelector(seed: options.seed, assetsPerDay: options.assetsPerDay, noRepeatDays: options.noRepeatDays)
        let ranking = selector.rank(library: library.map(\.name), date: date, history: history)
        let assets = Dictionary(library.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })

        let folder = layout.renditionFolder(date, manifest: manifest)
        let folderName = "\(date)-\(manifest)"
        record.add("renditions/\(folderName)/")
        try record.save(root)
        let renditionFolder: AtomicFile.Directory
        do {
            renditionFolder = try renditions.subdirectory(folderName, create: true)
        } catch {
            throw StagingFailure("\(error)")
        }

        guard let rendered = try renderDay(ranking: ranking, assets: assets, layout: layout, folder: folder, folderName: folderName,
                                           renditionFolder: renditionFolder, record: &record, root: root, isExpired: isExpired,
                                           writer: writer, report: &report) else {
            return expired(&report, date: date)
        }
        let (chosen, repeated) = (rendered.chosen, rendered.repeated)
        var notes = rendered.notes
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
        let playlistName = "\(date).json"
        let playlistTemporary = StagingWriter.temporaryName(for: playlistName)
        record.add("playlists/\(playlistName)")
        record.add("playlists/\(playlistTemporary)")
        try record.save(root)
        try writer.write(in: playlists, name: playlistName, temporary: playlistTemporary, data: try encoder.encode(playlist))

        try removeExpired(layout: layout, date: date, writer: writer, record: &record, root: root,
                          playlists: playlists, renditions: renditions)
        report.outcome = .staged
        report.log.append("staged \(date): \(chosen.count) assets x \(options.families.count) families, "
            + "\(report.renditionsWritten) renditions written, \(report.renditionsReused) reused")
        report.results = [reloadLine()]
    }

    /// Renders each ranked asset's renditions, in rank order, until `assetsPerDay` are staged:
    /// an asset's files are recorded before any is written, a rendition already there at the
    /// right size is reused, and an asset that cannot be rendered is skipped with a note. Nil
    /// when the run's allowance ran out meanwhile (nothing more is written).
    private func renderDay(ranking: PlaylistSelector.Ranking, assets: [String: LibraryAsset], layout: ContainerLayout,
                           folder: String, folderName: String, renditionFolder: AtomicFile.Directory,
                           record: inout OwnershipRecord, root: AtomicFile.Directory, isExpired: () -> Bool,
                           writer: StagingWriter, report: inout StageReport) throws
        -> (chosen: [(asset: String, renditions: [String: String])], notes: [String], repeated: Int)? {
        var chosen: [(asset: String, renditions: [String: String])] = []
        var notes: [String] = []
        var repeated = 0
        candidates: for (rank, asset) in ranking.order.enumerated() where chosen.count < options.assetsPerDay {
            guard let libraryAsset = assets[asset] else { continue }
            let source = libraryAsset.path
            // This asset's files and temporary names are recorded before any is created.
            let planned = options.families.map { family -> (family: RenditionSize, name: String, temporary: String) in
                let name = ContainerLayout.renditionName(asset: asset, family: family.name)
                return (family, name, StagingWriter.temporaryName(for: name))
            }
            for item in planned {
                record.add("renditions/\(folderName)/\(item.name)")
                record.add("renditions/\(folderName)/\(item.temporary)")
            }
            try record.save(root)
            var renditions: [String: String] = [:]
            for item in planned {
                let family = item.family
                if isExpired() { return nil }
                let relative = folder + "/" + item.name
                let target = layout.absolute(relative)
                // A rendition already there is reused only if it is a real file (never a link).
                if let info = try? RenditionRenderer.probe(target, followSymlinks: false), info.width == family.pixelWidth,
                   info.height == family.pixelHeight {
                    report.renditionsReused += 1
                } else {
                    do {
                        try writer.write(in: renditionFolder, name: item.name, temporary: item.temporary) { fd, temporary in
                            try RenditionRenderer.render(source: libraryAsset.source ?? source, toDescriptor: fd,
                                                         named: temporary, width: family.pixelWidth,
                                                         height: family.pixelHeight, memoryCeiling: options.memoryCeiling,
                                                         quality: options.quality, maxSourcePixels: options.maxSourcePixels,
                                                         isExpired: isExpired, followSymlinks: libraryAsset.followSymlinks)
                        }
                        report.renditionsWritten += 1
                    } catch let error as ImageError {
                        if error.isExpiration { return nil }
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
        return (chosen, notes, repeated)
    }

    private func expired(_ report: inout StageReport, date: CivilDate) {
        report.outcome = .expired
        report.log.append("expired while staging \(date) after \(report.renditionsWritten) renditions written "
            + "(\(report.renditionsReused) reused); the container is unchanged otherwise and the next run continues")
    }

    /// `{"reloadTimelines": KIND}`. An instance's options hold its values as filled (`alice@example.com`);
    /// the kind they name is written as a kind is derived (`InstanceKind.form`: each `@` as
    /// `-at-`), the kind of that instance's widget. A job's kind has no `@`: it is unchanged.
    func reloadLine() -> String {
        let data = (try? JSONEncoder().encode(["reloadTimelines": InstanceKind.form(options.widgetKind)])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The library's images, and a log line for each symlink refused (see
    /// `StageOptions.librarySymlinks`).
    private func listLibrary() throws -> (assets: [LibraryAsset], refused: [String]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: options.library)
        } catch {
            throw StagingFailure("library \(options.library): cannot read: \(error.localizedDescription)")
        }
        let images = names.filter { name in
            let lower = name.lowercased()
            return !name.hasPrefix(".") && (lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") || lower.hasSuffix(".png"))
        }.sorted().map { LibraryAsset(name: $0, path: (options.library as NSString).appendingPathComponent($0)) }
        var refused: [String] = []
        var assets: [LibraryAsset] = []
        let libraryRoot = Self.realPath(options.library) ?? options.library
        for var asset in images {
            var status = stat()
            if options.librarySymlinks == .refuse {
                asset.followSymlinks = false
                if lstat(asset.path, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
                    let target = Self.realPath(asset.path)
                    guard let target, target.hasPrefix(libraryRoot.hasSuffix("/") ? libraryRoot : libraryRoot + "/") else {
                        refused.append("\(asset.path): skipped: a symlink to \(target ?? "a missing file"), outside the library "
                            + "(stage-playlist.library-symlinks: follow allows it)")
                        continue
                    }
                    asset.source = target
                }
            }
            assets.append(asset)
        }
        guard !assets.isEmpty else {
            throw StagingFailure("library \(options.library) has no .jpg, .jpeg or .png files"
                + (refused.isEmpty ? "" : " it may use (\(refused.count) refused: \(refused.joined(separator: "; ")))"))
        }
        return (assets, refused)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
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

    /// Removes what staging recorded creating (`OwnershipRecord`), never anything else:
    /// playlists older than the retention window, then rendition folders no remaining playlist
    /// names (superseded manifests, abandoned runs), then stray temporary files.
    private func removeExpired(layout: ContainerLayout, date: CivilDate, writer: StagingWriter,
                               record: inout OwnershipRecord, root: AtomicFile.Directory,
                               playlists: AtomicFile.Directory, renditions: AtomicFile.Directory) throws {
        let oldest = date.adding(days: -options.retentionDays)
        var referenced = Set<String>()
        var keptDays = Set<String>()
        for name in record.playlists {
            if name.hasPrefix(".tmp-") {
                if faccessat(playlists.descriptor, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 { try writer.remove(name, in: playlists) }
                record.remove("playlists/\(name)")
                continue
            }
            guard let day = ContainerLayout.date(ofPlaylistFile: name) else { continue }
            if day < oldest {
                try writer.remove(name, in: playlists)
                record.remove("playlists/\(name)")
            } else if let playlist = readPlaylist(layout.playlists + "/" + name) {
                for entry in playlist.entries {
                    for relative in entry.renditions.values {
                        referenced.insert((relative as NSString).deletingLastPathComponent)
                    }
                }
            } else if faccessat(playlists.descriptor, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 {
                // Unreadable: keep every folder of its day rather than guess.
                keptDays.insert("\(day)-")
            } else {
                record.remove("playlists/\(name)")  // gone (removed by someone else)
            }
        }
        for name in record.renditionFolders {
            let relative = "\(options.folder)/renditions/\(name)"
            let owned = record.files(inRenditionFolder: name)
            if referenced.contains(relative) || keptDays.contains(where: { name.hasPrefix($0) }) {
                // Kept: only its stray temporary files go.
                let strays = owned.filter { $0.hasPrefix(".tmp-") }
                guard !strays.isEmpty else { continue }
                if let folder = try? renditions.subdirectory(name, create: false) {
                    for stray in strays where faccessat(folder.descriptor, stray, F_OK, AT_SYMLINK_NOFOLLOW) == 0 {
                        try writer.remove(stray, in: folder)
                    }
                }
                for stray in strays { record.remove("renditions/\(name)/\(stray)") }
                continue
            }
            try writer.removeFolder(name, files: owned, in: renditions)
            for file in owned { record.remove("renditions/\(name)/\(file)") }
            if faccessat(renditions.descriptor, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0 {
                record.remove("renditions/\(name)/")
            }
        }
        try record.save(root)
    }

    private func readPlaylist(_ path: String) -> Playlist? {
        PlaylistFile.read(path)
    }
}
