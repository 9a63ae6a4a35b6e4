// swift-tools-version:6.0
// The benchmark suite: `Scripts/bench` builds this package in release mode (its own .build) and
// runs `refreshd-bench` next to the C and APScheduler references in Benchmarks/reference/.
import PackageDescription

// A path dependency's package identity is its directory's name ("main" here, "refreshd" in a
// fresh clone), so take it from where this manifest lives: <root>/Benchmarks/Package.swift.
let mainPackage = String(#filePath.split(separator: "/").dropLast(2).last ?? "refreshd").lowercased()

let package = Package(
    name: "refreshd-benchmarks",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "refreshd-bench", targets: ["refreshd-bench"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(name: "refreshd-bench", dependencies: [
            // The embedding library; the layers and the shared database are timed through the
            // internals the main package shows this package only (`@_spi(Benchmarks) import`).
            .product(name: "Refreshd", package: mainPackage),
            .product(name: "RefreshdPostgres", package: mainPackage),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
