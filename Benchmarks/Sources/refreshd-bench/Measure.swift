import Glibc

/// Process measurements read from the kernel: CPU from getrusage, RSS and context switches
/// from /proc. No Foundation, so the baseline RSS stays small and comparable with the C reference.
enum Measure {
    /// User + system CPU of the whole process (all threads), in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func usage() -> rusage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage
    }

    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func seconds(_ tv: timeval) -> Double { Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6 }

    /// Heap allocations so far, when the counter of `reference/malloc_count.c` is preloaded; nil
    /// otherwise.
    static func allocations() -> UInt64? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_count") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)()
    }

    /// Wall clock (CLOCK_REALTIME) in nanoseconds: the clock earliest begin dates are on.
    static func realtimeNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func realtimeMillis() -> Int64 { realtimeNanos() / 1_000_000 }

    /// A field of a /proc status file ("VmRSS", "voluntary_ctxt_switches"), as its first number.
    static func statusField(_ name: String, path: String = "/proc/self/status") -> Int64? {
        guard let text = readFile(path) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber }
            return Int64(digits)
        }
        return nil
    }

    /// Resident set size in bytes.
    static func rssBytes() -> Int64 { (statusField("VmRSS") ?? 0) * 1024 }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The calling thread's id, from the /proc/thread-self link ("PID/task/TID").
    static func threadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/thread-self", &buffer, 63)
        guard n > 0 else { return -1 }
        let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(link.split(separator: "/").last ?? "") ?? -1
    }
}

/// Lateness statistics over launch instants and earliest begin dates.
struct Lateness {
    var p50: Double
    var p99: Double
    var max: Double
    var min: Double
    var early: Int

    /// - Parameter nanos: lateness of each launch, in nanoseconds.
    init(nanos: [Int64]) {
        let sorted = nanos.sorted()
        func ms(_ v: Int64) -> Double { Double(v) / 1e6 }
        func pct(_ p: Double) -> Int64 {
            guard !sorted.isEmpty else { return 0 }
            return sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
        p50 = ms(pct(0.50))
        p99 = ms(pct(0.99))
        max = ms(sorted.last ?? 0)
        min = ms(sorted.first ?? 0)
        early = sorted.prefix { $0 < 0 }.count
    }
}

/// A flat JSON object, printed on one line on stdout.
struct JSONLine {
    private var fields: [String] = []

    mutating func add(_ key: String, _ value: Double) {
        fields.append("\"\(key)\": \(value.isFinite ? String(value) : "null")")
    }
    mutating func add(_ key: String, _ value: Int) { fields.append("\"\(key)\": \(value)") }
    mutating func add(_ key: String, _ value: Int64) { fields.append("\"\(key)\": \(value)") }
    mutating func add(_ key: String, _ value: Bool) { fields.append("\"\(key)\": \(value)") }
    mutating func add(_ key: String, _ value: String) {
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        fields.append("\"\(key)\": \"\(escaped)\"")
    }
    mutating func add(_ lateness: Lateness) {
        add("lateness_p50_ms", lateness.p50)
        add("lateness_p99_ms", lateness.p99)
        add("lateness_max_ms", lateness.max)
        add("lateness_min_ms", lateness.min)
        add("early_launches", lateness.early)
    }

    func print() {
        Swift.print("{" + fields.joined(separator: ", ") + "}")
        fflush(nil)
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

/// A line on stderr (unbuffered, no shared FILE*).
func warn(_ text: String) {
    var bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
