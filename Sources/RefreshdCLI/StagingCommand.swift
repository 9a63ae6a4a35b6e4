import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdStaging

/// `refreshd staging ...` (hidden): the staging action's tools for scripts and the benchmark:
/// make the sample library, render one rendition, stage one day, each reporting its own wall
/// time and peak memory above the process's baseline (VmHWM after resetting it, minus VmRSS).
package struct StagingCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "staging",
        abstract: "Staging tools: sample library, one rendition, one staged day (for scripts and benchmarks).",
        shouldDisplay: false,
        subcommands: [SampleLibraryCommand.self, RenderCommand.self, StageCommand.self, BlankPNGCommand.self])

    struct BlankPNGCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "blank-png",
            abstract: "Write a black 1-bit PNG of any size (a few KB): a long decode, for tests of expiration and stop.")

        @Argument(help: "The PNG to write.")
        var path: String

        @Option(help: "Width in pixels.")
        var width: Int

        @Option(help: "Height in pixels.")
        var height: Int

        func run() throws {
            guard (1...1_000_000).contains(width), (1...1_000_000).contains(height) else {
                throw ValidationError("--width and --height: expected 1 to 1000000 pixels")
            }
            do {
                try SampleLibrary.writeBlankPNG(path: path, width: width, height: height)
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    struct SampleLibraryCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sample-library",
            abstract: "Write the deterministic sample wallpaper library (large JPEGs, some sideways, and PNGs) into DIR.")

        @Argument(help: "The folder to write (created if missing).")
        var directory: String

        func run() throws {
            for path in try SampleLibrary.make(in: directory) { print(path) }
        }
    }

    struct RenderCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "render",
            abstract: "Render one rendition and print a JSON line with its time and peak memory above baseline.")

        @Argument(help: "The source image (JPEG or PNG).")
        var source: String

        @Option(help: "Output JPEG path.")
        var output: String

        @Option(help: "Rendition width in pixels.")
        var width: Int = 1080

        @Option(help: "Rendition height in pixels.")
        var height: Int = 510

        @Option(help: "Memory ceiling in bytes.")
        var memoryCeiling: Int = 30 * 1_048_576

        @Flag(help: "Decode the whole image first, then reduce (the naive way, for comparison).")
        var fullDecode = false

        func run() throws {
            let meter = MemoryMeter()
            let report: RenditionRenderer.Report
            do {
                report = try RenditionRenderer.render(source: source, to: output, width: width, height: height,
                                                      memoryCeiling: memoryCeiling,
                                                      strategy: fullDecode ? .fullDecode : .reducedScale)
            } catch {
                throw ValidationError("\(error)")
            }
            let figures = meter.finish()
            let line: [String: Any] = [
                "impl": "refreshd", "bench": "render", "strategy": fullDecode ? "full-decode" : "reduced-scale",
                "source": "\(report.source.width)x\(report.source.height)", "output": "\(width)x\(height)",
                "scale": "\(report.scaleNumerator)/8", "decoded": "\(report.decodedWidth)x\(report.decodedHeight)",
                "peak_above_baseline_bytes": figures.peakAboveBaseline, "baseline_bytes": figures.baseline,
                "wall_s": figures.wall, "cpu_s": figures.cpu,
            ]
            print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
        }
    }

    struct StageCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stage",
            abstract: "Stage one day's playlist from a library into a container; print a JSON line with the figures.")

        @Option(help: "The wallpaper library folder.")
        var library: String

        @Option(help: "The shared container folder.")
        var container: String

        @Option(help: "The day to stage, YYYY-MM-DD (default: tomorrow in --timezone).")
        var date: String?

        @Option(help: "Switch times, comma-separated.")
        var switchTimes = "06:00,12:00,18:00,22:00"

        @Option(help: "IANA zone of the switch times.")
        var timezone = "UTC"

        @Option(help: "Assets a day.")
        var assetsPerDay = 4

        @Option(help: "Seed of the selection.")
        var seed: UInt64 = 1

        func run() throws {
            var options = StageOptions(library: library, switchTimes: switchTimes.split(separator: ",").compactMap { ClockTime(String($0)) },
                                       zone: timezone, assetsPerDay: assetsPerDay,
                                       families: [.systemSmall, .systemMedium, .systemLarge].map(RenditionSize.standard), widgetKind: "example.wallpaper")
            options.seed = seed
            if let date {
                guard let day = CivilDate(date) else { throw ValidationError("--date: expected YYYY-MM-DD, found \"\(date)\"") }
                options.day = .date(day)
            }
            let meter = MemoryMeter()
            let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            let report = PlaylistStager(options: options).run(container: container, now: now, isExpired: { false })
            let figures = meter.finish()
            for line in report.log { FileHandle.standardError.write(Data((line + "\n").utf8)) }
            guard report.succeeded else { throw ExitCode.failure }
            let line: [String: Any] = [
                "impl": "refreshd", "bench": "stage", "outcome": report.outcome.rawValue, "date": report.date?.description ?? "",
                "assets": assetsPerDay, "families": options.families.count, "renditions_written": report.renditionsWritten,
                "renditions_reused": report.renditionsReused, "peak_above_baseline_bytes": figures.peakAboveBaseline,
                "wall_s": figures.wall, "cpu_s": figures.cpu,
            ]
            print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
        }
    }

    /// Peak resident memory above the baseline and the time of the work between init and finish.
    struct MemoryMeter {
        let baseline: Int
        let start: Double
        let cpuStart: Double

        init() {
            // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
            try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
            baseline = MemoryMeter.status("VmRSS")
            start = MemoryMeter.monotonic()
            cpuStart = MemoryMeter.cpu()
        }

        func finish() -> (peakAboveBaseline: Int, baseline: Int, wall: Double, cpu: Double) {
            let wall = MemoryMeter.monotonic() - start, cpu = MemoryMeter.cpu() - cpuStart
            return (max(0, MemoryMeter.status("VmHWM") - baseline), baseline, wall, cpu)
        }

        /// A `kB` field of /proc/self/status, in bytes.
        static func status(_ field: String) -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
            for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
                return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
            }
            return 0
        }

        static func monotonic() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }

        static func cpu() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
    }
}
