import Foundation
import RefreshdCore

/// Reads the `stage-playlist:` block of a job with `action: stage-playlist` into `StageOptions`:
///
/// ```yaml
/// action: stage-playlist
/// stage-playlist:
///   library: .refreshd/library          # folder of .jpg/.jpeg/.png; relative to the project root
///   switch-times: ["06:00", "12:00", "18:00", "22:00"]
///   timezone: Europe/Paris              # default: the job's timezone:, else the machine's
///   assets-per-day: 4                   # default: one per switch time
///   no-repeat-days: 7
///   families: [systemSmall, systemMedium]          # standard sizes, or with sizes:
///   # families: {systemMedium: {points: 360x170, scale: 3}}
///   seed: 1
///   widget: wallpaper                   # the widget kind reloaded after staging
///   retention-days: 7
///   memory-ceiling: 30MiB
///   day: tomorrow                       # or today
///   today-if-missing: true              # with day: tomorrow, stage today first if it is missing
///   folder: wallpaper                   # under the shared container
///   quality: 85                         # JPEG quality of renditions
///   max-source-pixels: 120000000        # larger sources are refused before decoding
///   library-symlinks: refuse            # or follow: links from the library to files outside it
/// ```
///
/// Every problem is located at the value it is about (or at the block for a missing key), and
/// `StageOptions.problems()` has the last word, its texts placed at their option's value.
enum StageBlock {
    static let keys = ["library", "switch-times", "timezone", "assets-per-day", "no-repeat-days", "families", "seed",
                       "widget", "retention-days", "memory-ceiling", "day", "today-if-missing", "folder", "quality",
                       "max-source-pixels", "library-symlinks"]
    static let example = "stage-playlist: {library: DIR, switch-times: [\"06:00\"], families: [systemMedium], widget: KIND}"

    /// The largest memory ceiling accepted: 4 GiB (a widget's is about 30 MiB).
    static let maximumMemoryCeiling = 4 << 30

    /// The options, or nil with every problem in `sink`. `projectRoot` resolves a relative
    /// library; `zone` is the job's zone, the default of `timezone`.
    /// `parameters`: a template's (nil for a job): its `widget` may then be a kind pattern
    /// (`wallpaper-{user}`), each instance's run reloading its own instance's widget kind (made
    /// as a timeline template's is, `InstanceKind`); the pattern is `kindPattern`.
    static func read(_ reader: ValueReader, projectRoot: String, zone: TimeZone, parameters: [String]? = nil,
                     source: SourceText? = nil, _ sink: inout ErrorSink) -> StageOptions? {
        let before = sink.errors.count
        guard let fields = MappingFields(reader, known: keys, example: example, &sink) else { return nil }
        let library = fields.required("library", &sink).flatMap { libraryPath($0, projectRoot: projectRoot, &sink) }
        let switchTimes = fields.required("switch-times", &sink).flatMap { self.switchTimes($0, &sink) }
        let families = fields.required("families", &sink).flatMap { self.families($0, &sink) }
        let widget = fields.required("widget", &sink).flatMap { value -> String? in
            if let parameters, let source, let text = value.node.scalarText, Placeholders.mayHavePlaceholders(text) {
                return WidgetBlock.kindPattern(value, parameters: parameters, source: source, &sink)
            }
            return WidgetBlock.widgetKind(value, &sink)
        }
        let zone = fields.optional("timezone").map { $0.timeZone(&sink) } ?? zone
        guard let library, let switchTimes, let families, let widget, let zone else { return nil }

        var options = StageOptions(library: library, switchTimes: switchTimes, zone: zone.identifier,
                                   assetsPerDay: switchTimes.count, families: families, widgetKind: widget)
        if let value = fields.optional("assets-per-day"), let count = value.count(&sink) { options.assetsPerDay = count }
        if let value = fields.optional("no-repeat-days"), let count = value.count(&sink) { options.noRepeatDays = count }
        if let value = fields.optional("retention-days"), let count = value.count(&sink) { options.retentionDays = count }
        if let value = fields.optional("seed"), let seed = self.seed(value, &sink) { options.seed = seed }
        if let value = fields.optional("quality"), let count = value.count(&sink) { options.quality = count }
        if let value = fields.optional("max-source-pixels"), let count = value.count(&sink) { options.maxSourcePixels = count }
        if let value = fields.optional("library-symlinks"),
           let policy = value.oneOf(StageOptions.LibrarySymlinks.allCases.map(\.rawValue), &sink) {
            options.librarySymlinks = StageOptions.LibrarySymlinks(rawValue: policy) ?? .refuse
        }
        if let value = fields.optional("memory-ceiling"), let bytes = memoryCeiling(value, &sink) { options.memoryCeiling = bytes }
        if let value = fields.optional("folder"), let folder = value.string(&sink, expected: "a folder name like wallpaper") {
            options.folder = folder
        }
        if parameters == nil || !Placeholders.mayHavePlaceholders(options.folder), options.folder.utf8.count > TemplateSettings.maximumFolderBytes {
            sink.add(at: fields.optional("folder")?.node.location ?? reader.node.location, "stage-playlist.folder: expected at most "
                + "\(TemplateSettings.maximumFolderBytes) bytes (one folder name), found \(options.folder.utf8.count)")
        }
        if let value = fields.optional("today-if-missing"), let flag = value.bool(&sink) { options.todayIfMissing = flag }
        if let value = fields.optional("day"), let day = value.oneOf(["tomorrow", "today"], &sink) {
            options.day = day == "today" ? .today : .tomorrow
        }
        guard sink.errors.count == before else { return nil }
        for problem in options.problems() {
            let field = problem.prefix { $0 != ":" }
            let key = field == "widget-kind" ? "widget" : String(field)
            let location = fields.optional(key)?.node.location ?? reader.node.location
            let text = field == "widget-kind" ? "widget" + problem.dropFirst(field.count) : problem
            sink.add(at: location, "stage-playlist.\(text)")
        }
        return sink.errors.count == before ? options : nil
    }

    /// The action a job runs for these options, as data; its fingerprint is their canonical text.
    static func action(_ options: StageOptions) -> ActionSpec { .stagePlaylist(options) }

    private static func libraryPath(_ reader: ValueReader, projectRoot: String, _ sink: inout ErrorSink) -> String? {
        guard let text = reader.string(&sink, expected: "the path of a folder of images") else { return nil }
        guard !text.isEmpty, text.utf8.count <= 4096 else {
            sink.add(at: reader.node.location, "\(reader.key): expected the path of a folder of images (1 to 4096 bytes), "
                + "found \(EchoText.quoted(text))")
            return nil
        }
        return text.hasPrefix("/") ? text : PathText.join(projectRoot, text)
    }

    private static func switchTimes(_ reader: ValueReader, _ sink: inout ErrorSink) -> [ClockTime]? {
        guard case .sequence(let items, _) = reader.node, !items.isEmpty else {
            sink.add(at: reader.node.location, "\(reader.key): expected a non-empty list of times like [\"06:00\", \"18:00\"], "
                + "found \(reader.node.foundDescription)")
            return nil
        }
        guard items.count <= 1440 else {
            sink.add(at: reader.node.location, "\(reader.key): expected at most 1440 times (one a minute), found \(items.count)")
            return nil
        }
        var times: [ClockTime] = []
        var ok = true
        for item in items {
            let value = ValueReader(key: reader.key, node: item)
            guard let text = value.string(&sink, expected: "a time like 06:00") else {
                ok = false
                continue
            }
            guard let time = ClockTime(text) else {
                sink.add(at: item.location, "\(reader.key): expected a time like 06:00 (00:00 to 23:59), found \(EchoText.quoted(text))")
                ok = false
                continue
            }
            if times.contains(time) {
                sink.add(at: item.location, "\(reader.key): \(time) is listed twice; expected each time once")
                ok = false
            }
            times.append(time)
        }
        return ok ? times : nil
    }

    /// `[systemSmall, systemMedium]` (standard sizes) or `{systemMedium: {points: 360x170, scale: 3}}`
    /// (either key may be left out for the standard one; a null value is the standard size).
    private static func families(_ reader: ValueReader, _ sink: inout ErrorSink) -> [RenditionSize]? {
        let names = WidgetFamily.allCases.map(\.rawValue)
        var sizes: [RenditionSize] = []
        var ok = true
        func add(_ family: WidgetFamily, at location: Location) {
            if sizes.contains(where: { $0.family == family }) {
                sink.add(at: location, "\(reader.key): \(family.rawValue) is listed twice; expected each family once")
                ok = false
            }
            sizes.append(.standard(family))
        }
        switch reader.node {
        case .sequence(let items, _) where !items.isEmpty:
            for item in items {
                guard let name = ValueReader(key: reader.key, node: item).oneOf(names, &sink),
                      let family = WidgetFamily(rawValue: name) else {
                    ok = false
                    continue
                }
                add(family, at: item.location)
            }
        case .mapping(let pairs, _) where !pairs.isEmpty:
            for (keyNode, value) in pairs {
                guard let name = ValueReader(key: reader.key, node: keyNode).oneOf(names, &sink),
                      let family = WidgetFamily(rawValue: name) else {
                    ok = false
                    continue
                }
                add(family, at: keyNode.location)
                if !value.isNullScalar, let size = self.size(ValueReader(key: "\(reader.key).\(name)", node: value), of: family, &sink) {
                    sizes[sizes.count - 1] = size
                } else if !value.isNullScalar {
                    ok = false
                }
            }
        default:
            sink.add(at: reader.node.location, "\(reader.key): expected a non-empty list of families like [systemSmall, systemMedium], "
                + "or a mapping like {systemMedium: {points: 360x170, scale: 3}}, found \(reader.node.foundDescription)")
            return nil
        }
        return ok ? sizes : nil
    }

    /// `{points: 360x170, scale: 3}`, each key optional (the family's standard value).
    private static func size(_ reader: ValueReader, of family: WidgetFamily, _ sink: inout ErrorSink) -> RenditionSize? {
        guard let fields = MappingFields(reader, known: ["points", "scale"], example: "{points: 360x170, scale: 3}", &sink) else {
            return nil
        }
        var size = RenditionSize.standard(family)
        var ok = true
        if let points = fields.optional("points") {
            let expected = "a size in points like 360x170 (1 to 16384 each)"
            if let text = points.string(&sink, expected: expected) {
                let parts = text.split(separator: "x", omittingEmptySubsequences: false)
                if parts.count == 2, let w = number(parts[0]), let h = number(parts[1]) {
                    size.widthPoints = w
                    size.heightPoints = h
                } else {
                    sink.add(at: points.node.location, "\(points.key): expected \(expected), found \(EchoText.quoted(text))")
                    ok = false
                }
            } else {
                ok = false
            }
        }
        if let scale = fields.optional("scale") {
            let expected = "a scale like 2 or 3 (more than 0, at most 16)"
            if let text = scale.string(&sink, expected: expected), let value = number(Substring(text)), value <= 16 {
                size.scale = value
            } else {
                if let text = scale.node.scalarText {
                    sink.add(at: scale.node.location, "\(scale.key): expected \(expected), found \(EchoText.quoted(text))")
                }
                ok = false
            }
        }
        return ok ? size : nil
    }

    /// A finite number greater than 0 and at most 16384, written with digits and one optional point.
    private static func number(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 12,
              text.allSatisfy({ $0 == "." || ($0.isASCII && $0.isNumber) }), text.filter({ $0 == "." }).count <= 1,
              let value = Double(text), value > 0, value <= 16_384 else { return nil }
        return value
    }

    private static func seed(_ reader: ValueReader, _ sink: inout ErrorSink) -> UInt64? {
        let expected = "a whole number from 0 to 18446744073709551615"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        if let value = UInt64(text), !text.hasPrefix("+") { return value }
        sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }

    /// Bytes: `31457280`, `30MiB`, `512KiB`, `1GiB`, or decimal `30MB` (30,000,000), `KB`, `GB`.
    static func memoryCeiling(_ reader: ValueReader, _ sink: inout ErrorSink) -> Int? {
        let expected = "a size like 30MiB, 512KiB or a number of bytes (1 byte to 4GiB)"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let units: [String: Int] = ["": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
                                    "KB": 1000, "MB": 1_000_000, "GB": 1_000_000_000]
        if digits.count <= 10, let value = Int(digits), let unit = units[String(text.dropFirst(digits.count))] {
            let (bytes, overflow) = value.multipliedReportingOverflow(by: unit)
            if !overflow, (1...maximumMemoryCeiling).contains(bytes) { return bytes }
        }
        sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(EchoText.quoted(text))")
        return nil
    }
}
