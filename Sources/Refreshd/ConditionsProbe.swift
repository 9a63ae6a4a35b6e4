import Glibc
import RefreshdCore

/// Reads external power and network state from sysfs and procfs.
///
/// External power: any power supply of type Mains/USB/etc. reporting `online` 1; a machine with
/// no battery at all counts as on external power. Network: a default route (IPv4 or IPv6) through
/// a non-loopback interface that is up. Paths are parameters so tests can point at a fake tree.
public struct ConditionsProbe: Sendable {
    /// Where power supplies are listed (`/sys/class/power_supply`).
    public var powerSupplyDirectory: String
    /// Where network interfaces are listed (`/sys/class/net`).
    public var netDirectory: String
    /// The IPv4 routing table (`/proc/net/route`).
    public var ipv4RouteFile: String
    /// The IPv6 routing table (`/proc/net/ipv6_route`).
    public var ipv6RouteFile: String

    /// A probe of the real machine by default; tests point it at a fake tree.
    public init(powerSupplyDirectory: String = "/sys/class/power_supply",
                netDirectory: String = "/sys/class/net",
                ipv4RouteFile: String = "/proc/net/route",
                ipv6RouteFile: String = "/proc/net/ipv6_route") {
        self.powerSupplyDirectory = powerSupplyDirectory
        self.netDirectory = netDirectory
        self.ipv4RouteFile = ipv4RouteFile
        self.ipv6RouteFile = ipv6RouteFile
    }

    /// Reads the conditions now (a few small files; the scheduler calls it on netlink events).
    public func read() -> Conditions {
        Conditions(externalPower: externalPower(), network: network())
    }

    func externalPower() -> Bool {
        var sawBattery = false
        for supply in Self.list(powerSupplyDirectory) {
            let base = "\(powerSupplyDirectory)/\(supply)"
            let type = Self.readFile("\(base)/type") ?? ""
            if type == "Battery" {
                sawBattery = true
            } else if Self.readFile("\(base)/online") == "1" {
                return true
            }
        }
        return !sawBattery
    }

    func network() -> Bool {
        var interfaces: [String] = []
        if let table = Self.readFile(ipv4RouteFile) {
            // Iface Destination Gateway Flags ...; destination 00000000 is the default route.
            for line in table.split(separator: "\n").dropFirst() {
                let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if f.count > 3, f[1] == "00000000", let flags = Int(f[3], radix: 16), flags & 1 != 0 {
                    interfaces.append(String(f[0]))
                }
            }
        }
        if let table = Self.readFile(ipv6RouteFile) {
            // dest prefixlen src srcprefix nexthop metric refcnt use flags iface
            for line in table.split(separator: "\n") {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                if f.count >= 10, f[0] == "00000000000000000000000000000000", f[1] == "00",
                   let flags = Int(f[8], radix: 16), flags & 1 != 0 {
                    interfaces.append(String(f[9]))
                }
            }
        }
        return interfaces.contains { iface in
            guard iface != "lo" else { return false }
            guard let flags = Self.readFile("\(netDirectory)/\(iface)/flags"),
                  let value = Int(flags.hasPrefix("0x") ? String(flags.dropFirst(2)) : flags, radix: 16)
            else { return true }
            return value & 0x1 != 0 && value & 0x8 == 0  // IFF_UP and not IFF_LOOPBACK
        }
    }

    package static func readFile(_ path: String) -> String? {
        readFile(at: AT_FDCWD, path)
    }

    /// The file `name` relative to the directory open on `directory` (`AT_FDCWD`: the working
    /// directory), without trailing spaces and newlines. With open and read, not fopen: no FILE,
    /// buffer or fstat for the files read at every run's end (a run cgroup's `cgroup.procs` and
    /// `cpu.stat`, opened relative to the cgroup's directory: no walk of its path each time).
    static func readFile(at directory: Int32, _ name: String) -> String? {
        let fd = openat(directory, name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while true {
            if count == out.count { out += [UInt8](repeating: 0, count: out.count) }
            let n = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        var s = String(decoding: out[..<count], as: UTF8.self)
        while s.last == "\n" || s.last == " " { s.removeLast() }
        return s
    }

    static func list(_ directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
