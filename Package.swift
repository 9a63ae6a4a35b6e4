// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "refreshd",
    platforms: [.macOS(.v14)],
    products: [
        // The one library for embedders (issue 22): `import Refreshd` is the whole public API, the
        // scheduler and the values it takes and shows (re-exported from the core and the runtime,
        // whose other declarations are `package`). ARCHITECTURE.md, "Modules", says why.
        .library(name: "Refreshd", targets: ["Refreshd"]),
        .executable(name: "refreshd", targets: ["refreshd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // Metrics in the Prometheus text format (issue 13): the API and its exposition.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The web dashboard (issue 25): an HTTP server on SwiftNIO's threads beside the libuv loop.
        // No traits (tools 6.1): its default ConfigurationSupport builds swift-configuration, which
        // refreshd never calls (issue 36: 17 CPU-seconds of a cold build).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // Hummingbird's own dependency, named to stop the dashboard gracefully (ServiceGroup).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // libuv from Debian's libuv1-dev, found by pkg-config.
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        // libyaml's parser from Debian's libyaml-dev: the job files' own composer reads its events
        // (issue 36: Yams' Swift half, which refreshd never called, was a dependency to compile).
        .systemLibrary(name: "CLibYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // SQLite's C API from Debian's libsqlite3-dev.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's C client from Debian's libpq-dev (issue 24: several nodes on one database).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // libjpeg-turbo and libpng for the staging action's renditions (C shims turn their
        // longjmp errors into return values).
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // libcurl from Debian's libcurl4-openssl-dev: the failure notifications' webhook POSTs
        // (issue 36: it replaced async-http-client, whose TLS stack and event loops were half of
        // a cold build; libpq already brings OpenSSL to the package's dependencies).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // Deterministic scheduling core: events in, effects out. No clock, no I/O.
        .target(name: "RefreshdCore", dependencies: [
            .product(name: "HeapModule", package: "swift-collections"),
        ]),
        // Calendar expressions (systemd OnCalendar, cron) evaluated in IANA time zones. Pure;
        // civil-date arithmetic comes from the core.
        .target(name: "RefreshdCalendar", dependencies: ["RefreshdCore"]),
        // Job and scenario files: YAML in, validated plain data (job specs, scenario and stage-playlist
        // options, built-in actions named by name) or located errors out. No code of its own to run:
        // the layers above bind actions (staging) and run scenarios (simulation).
        .target(name: "RefreshdConfig", dependencies: [
            "RefreshdCore", "RefreshdCalendar", "CLibYAML",
        ]),
        // Durable state: pending requests, run history, counters in SQLite (WAL).
        // and the in-memory store the simulator and an embedder without a state directory use
        // (the same fold, in memory).
        .target(name: "RefreshdStore", dependencies: [
            "RefreshdCore", "CSQLite",
            .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // The database several nodes share (issue 24): shard leases in database time and fenced
        // per-shard stores in PostgreSQL, over libpq's synchronous calls with bounded waits.
        .target(name: "RefreshdPostgres", dependencies: ["RefreshdCore", "CLibPQ"]),
        // The engine: machines + store + commit-before-act + restore + seeding and reload, over a
        // host protocol and a store protocol. Its hosts and stores live beside the others: the
        // simulated host with the simulator, the in-memory store with SQLite.
        .target(name: "RefreshdRuntime", dependencies: [
            "RefreshdCore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Days of a user's jobs in virtual time: it runs the scenarios the configuration reads
        // (device, faults, expectations), checks invariants, reports.
        .target(name: "RefreshdSimulation", dependencies: [
            "RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "RefreshdStore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Staging a day's playlist with display-size renditions into the shared container, and the
        // widget side that reads it back as a timeline; binds the built-in actions job files name.
        .target(name: "RefreshdStaging", dependencies: ["RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "CJPEG", "CPNG"]),
        // The libuv host and the public embedding API: declare identifiers with handlers, submit
        // requests, run the loop. No job files, no control socket: an embedder needs none of them.
        .target(name: "Refreshd", dependencies: [
            "RefreshdCore", "RefreshdRuntime", "RefreshdStore", "CLibUV",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // refreshd as a service: job files in (RefreshDaemon, reloads), the control socket,
        // sd_notify, metrics and the daemon's log line format, on the libuv host. Not a product:
        // the refreshd executable is its one user, so its declarations are package, not public.
        .target(name: "RefreshdDaemon", dependencies: [
            "Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "RefreshdStore", "CLibUV", "CCurl",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        // The dashboard's files (the document's paths and words; the script and styles), compiled
        // into the binary (no bundle at run time: the Debian package installs the binary alone)
        // with C23's `#embed` (assets.c says why not `embedInCode`); excluded so SwiftPM does not
        // take them for sources.
        .target(name: "CWebAssets", exclude: ["openapi.json", "dashboard.js", "dashboard.css", "favicon.svg"]),
        // What the web dashboard shows (issue 25): its live facts, its pages (a typed, escaping
        // `HTML` builder) and JSON models, the OpenAPI document, the overview's picture. No HTTP:
        // it compiles beside Hummingbird's chain in a cold build, so only the routes wait for
        // Hummingbird (issue 36).
        .target(name: "RefreshdDashboard", dependencies: [
            "RefreshdDaemon", "RefreshdCore", "RefreshdRuntime", "RefreshdStore", "RefreshdSimulation", "CWebAssets",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The web dashboard's server: routes, actions and SSE over Hummingbird on SwiftNIO's
        // threads. It reaches the runtime only through the daemon's thread-safe API (the control
        // server's calls); it never runs on the libuv loop.
        .target(name: "RefreshdWeb", dependencies: [
            "RefreshdDashboard", "RefreshdDaemon", "RefreshdCore", "RefreshdRuntime", "RefreshdSimulation",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The command line's subcommands but `run`: a module of their own, so a cold build
        // compiles them beside the web server's chain (issue 36); `refreshd` is the root command
        // and `run`, the one that starts the dashboard.
        .target(name: "RefreshdCLI", dependencies: [
            "Refreshd", "RefreshdDaemon", "RefreshdConfig", "RefreshdStore", "RefreshdCalendar", "RefreshdSimulation",
            "RefreshdStaging",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "refreshd", dependencies: [
            "RefreshdCLI", "RefreshdDaemon", "RefreshdWeb", "RefreshdConfig", "RefreshdStaging", "RefreshdPostgres", "CLibPQ",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Shows the public embedding API (a handler, a request, the loop run and stopped); the
        // suite builds it and runs it (refreshdCLITests, EmbeddingExampleTests).
        .executableTarget(name: "refreshd-embedding-example", dependencies: ["Refreshd"],
                          path: "Examples/Embedding"),
        // `Scripts/bench`'s program: the layers, the stores and the shared database timed through
        // the package's internals (`package` access reaches it as a target of this package; no
        // SPI, no second package). Not a product: nothing outside the repository runs it.
        .executableTarget(name: "refreshd-bench", dependencies: [
            "Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdStore", "RefreshdPostgres", "RefreshdSimulation",
            .product(name: "Logging", package: "swift-log"),
        ], path: "Benchmarks/Sources/refreshd-bench"),

        // What several test targets share (test targets cannot depend on each other).
        .target(name: "RefreshdTestSupport", dependencies: ["RefreshdCore"], path: "Tests/RefreshdTestSupport"),
        .testTarget(name: "RefreshdCoreTests", dependencies: ["RefreshdCore"]),
        .testTarget(name: "RefreshdCalendarTests", dependencies: ["RefreshdCalendar", "RefreshdCore"], exclude: ["Fixtures"]),
        .testTarget(name: "RefreshdConfigTests", dependencies: ["RefreshdConfig", "RefreshdCore", "RefreshdRuntime", "RefreshdDaemon"]),
        .testTarget(name: "RefreshdStoreTests", dependencies: ["RefreshdStore", "RefreshdCore", "RefreshdRuntime", "RefreshdTestSupport"]),
        // Against a private PostgreSQL server the tests start themselves (unix socket only).
        // The ShardDatabase contract runs there on both implementations (PostgreSQL and the
        // simulation's modelled database).
        .testTarget(name: "RefreshdPostgresTests", dependencies: ["RefreshdPostgres", "RefreshdStore", "RefreshdCore", "RefreshdRuntime",
                                                                 "RefreshdSimulation", "CLibPQ", "RefreshdTestSupport"]),
        .testTarget(name: "RefreshdSimulationTests", dependencies: ["RefreshdSimulation", "RefreshdRuntime", "RefreshdCore", "RefreshdConfig", "RefreshdStore"]),
        // The engine on the simulated host, with the in-memory store, and what the daemon makes of it.
        .testTarget(name: "RefreshdRuntimeTests", dependencies: ["RefreshdRuntime", "RefreshdCore", "RefreshdStore", "RefreshdSimulation", "RefreshdDaemon"]),
        .testTarget(name: "RefreshdTests", dependencies: ["Refreshd", "RefreshdDaemon", "RefreshdRuntime", "RefreshdCore", "RefreshdStore", "RefreshdConfig", "RefreshdStaging", "RefreshdSimulation"]),
        .testTarget(name: "RefreshdStagingTests", dependencies: ["RefreshdStaging", "RefreshdConfig", "RefreshdRuntime", "RefreshdCore"]),
        .testTarget(name: "RefreshdWebTests", dependencies: ["RefreshdWeb", "RefreshdDashboard", "RefreshdDaemon", "RefreshdCore", "RefreshdRuntime", "RefreshdTestSupport"]),
        .testTarget(name: "refreshdCLITests", dependencies: ["RefreshdStore", "RefreshdCore", "RefreshdRuntime", "RefreshdDaemon", "RefreshdTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
