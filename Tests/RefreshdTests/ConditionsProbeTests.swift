import Foundation
import Testing
@testable import Refreshd

/// External power and network read from fake sysfs/procfs trees.
@Suite struct ConditionsProbeTests {
    func tree(_ files: [String: String]) throws -> String {
        let root = TempDirectory.make()
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return root
    }

    func probe(_ root: String) -> ConditionsProbe {
        ConditionsProbe(powerSupplyDirectory: root + "/power", netDirectory: root + "/net",
                        ipv4RouteFile: root + "/route", ipv6RouteFile: root + "/ipv6_route")
    }

    @Test func noBatteryCountsAsExternalPower() throws {
        let root = try tree(["power/.keep": ""])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(probe(root).externalPower())
    }

    @Test func batteryWithoutMainsIsNotExternalPower() throws {
        let root = try tree(["power/BAT0/type": "Battery\n", "power/AC/type": "Mains\n", "power/AC/online": "0\n"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(!probe(root).externalPower())
        try "1\n".write(toFile: root + "/power/AC/online", atomically: true, encoding: .utf8)
        #expect(probe(root).externalPower())
    }

    @Test func networkNeedsADefaultRouteOnAnUpNonLoopbackInterface() throws {
        let header = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
        let root = try tree([
            "route": header + "lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n",
            "net/lo/flags": "0x9\n", "net/eth0/flags": "0x1002\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(!probe(root).network())  // only loopback has a default route
        try (header + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
            .write(toFile: root + "/route", atomically: true, encoding: .utf8)
        #expect(!probe(root).network())  // eth0 is down (IFF_UP clear)
        try "0x1003\n".write(toFile: root + "/net/eth0/flags", atomically: true, encoding: .utf8)
        #expect(probe(root).network())
        try "".write(toFile: root + "/route", atomically: true, encoding: .utf8)
        try "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n"
            .write(toFile: root + "/ipv6_route", atomically: true, encoding: .utf8)
        #expect(probe(root).network())  // an IPv6 default route counts too
    }
}
