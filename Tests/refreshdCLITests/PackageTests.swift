import Foundation
import Testing

/// The Debian package (`Scripts/package`) and its check (`Scripts/package-check`): the binary
/// must run where there is no Swift.
@Suite struct PackageTests {
    /// The newest package `Scripts/package` left in .build-package/, if any (building one takes
    /// a release build of minutes, so the suite checks one when it is there).
    static var builtPackage: String? {
        let dir = Repository.root + "/.build-package"
        let debs = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".deb") }
        return debs.map { dir + "/" + $0 }.max { modified($0) < modified($1) }
    }

    static func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    /// The check refuses a package whose binary needs the Swift toolchain's libraries: the test
    /// build of refreshd, linked against them, packed as `Scripts/package` would.
    @Test func theCheckRefusesABinaryThatNeedsSwiftLibraries() throws {
        let box = Sandbox()
        defer { box.remove() }
        let stage = box.root + "/stage"
        try FileManager.default.createDirectory(atPath: stage + "/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: stage + "/usr/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: stage + "/usr/bin/refreshd", withDestinationPath: CLI.binary)
        try "Package: refreshd\nVersion: 0.0~test\nArchitecture: all\nMaintainer: t <t@localhost>\nDescription: t\n"
            .write(toFile: stage + "/DEBIAN/control", atomically: true, encoding: .utf8)
        #expect(system("dpkg-deb -Znone --root-owner-group --build '\(stage)' '\(box.root)/t.deb' >/dev/null 2>&1") == 0)
        try FileManager.default.createDirectory(atPath: box.root + "/work", withIntermediateDirectories: true)
        let r = try ScriptsTests.script("package-check", [box.root + "/t.deb", box.root + "/work"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("the binary loads Swift libraries"), "\(r.stderr)")
    }

    /// A package Scripts/package built: unpacked, its binary runs with no Swift on the PATH and
    /// loads no Swift library, and its unit runs refreshd as the `refreshd` account.
    @Test(.enabled(if: builtPackage != nil, "no package built: run Scripts/package"))
    func theBuiltPackageRunsWithoutSwift() throws {
        let deb = try #require(Self.builtPackage)
        let box = Sandbox()
        defer { box.remove() }
        let r = try ScriptsTests.script("package-check", [deb, box.root])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("the binary runs without Swift"), "\(r.stderr)")
    }
}
