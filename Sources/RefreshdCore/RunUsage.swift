/// What a command run used, as the host measured it once every process of the run had ended
/// (issue 35): from the run's cgroup (`cpu.stat` usage_usec, `memory.peak`, `memory.events`
/// oom_kill), nothing where the run had none. The host reports the facts; the core decides
/// what they mean (a memory-limit kill makes the run `crashed`, `SchedulerCore.finish`).
package struct RunUsage: Sendable, Hashable {
    /// CPU time of all the run's processes, user and system, in microseconds.
    package var cpuMicroseconds: Int64?
    /// The most memory the run's processes held at once, in bytes.
    package var peakMemoryBytes: Int64?
    /// Processes of the run the kernel killed because the run was over its memory limit.
    package var memoryLimitKills: Int

    package init(cpuMicroseconds: Int64? = nil, peakMemoryBytes: Int64? = nil, memoryLimitKills: Int = 0) {
        self.cpuMicroseconds = cpuMicroseconds
        self.peakMemoryBytes = peakMemoryBytes
        self.memoryLimitKills = memoryLimitKills
    }

    /// Nothing measured (an in-process task, an action, a host without cgroups).
    package static let none = RunUsage()

    /// `cpu 0.21s, peak memory 12.3 MiB`, the parts measured; nil when none was.
    package var summary: String? {
        var parts: [String] = []
        if let cpu = cpuMicroseconds { parts.append("cpu \(Self.seconds(cpu))") }
        if let peak = peakMemoryBytes { parts.append("peak memory \(Self.size(peak))") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// Microseconds as seconds with two decimals: `0.21s`.
    package static func seconds(_ microseconds: Int64) -> String {
        let hundredths = (microseconds + 5_000) / 10_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)s"
    }

    /// Bytes in binary units with one decimal: `512 B`, `12.3 MiB`, `1.0 GiB`.
    package static func size(_ bytes: Int64) -> String {
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        var unit = "KiB"
        for next in ["MiB", "GiB", "TiB"] where value >= 1024 {
            value /= 1024
            unit = next
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(unit)"
    }
}

extension RunUsage {
    /// The reason the core gives a run that ended `crashed` because the kernel killed a process
    /// of it over its memory limit.
    package static let memoryLimitReason = "memory limit"
}
