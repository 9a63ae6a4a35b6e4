import Foundation
import Testing

/// The module graph reads bottom-up (ARCHITECTURE.md, "The module graph"): each module imports
/// only the modules below it. Checked on the sources' import lines, which is what the compiler
/// links, so a module that reaches up (the configuration importing the simulator, the embedding
/// library importing the configuration) fails here naming the file and the import.
@Suite struct ModuleGraphTests {
    /// The project's modules and the third-party ones whose place in the graph matters.
    static let governed: Set<String> = [
        "RefreshdCore", "RefreshdCalendar", "RefreshdRuntime", "RefreshdStore", "RefreshdConfig", "RefreshdSimulation",
        "RefreshdStaging", "Refreshd", "RefreshdDaemon", "CLibUV", "CSQLite", "CJPEG", "CPNG",
        "RefreshdPostgres", "CLibPQ",
        "CCurl", "CLibYAML", "CWebAssets", "Prometheus", "CoreMetrics", "ArgumentParser", "RefreshdCLI", "RefreshdDashboard", "RefreshdWeb", "Hummingbird", "HummingbirdCore", "ServiceLifecycle",
        // SwiftNIO is the dashboard's alone; the core logs nothing (it returns log effects).
        "NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers", "Logging", "HeapModule", "DequeModule",
    ]

    /// What each module (a folder of Sources/ or Examples/) may import among `governed`.
    static let allowed: [String: Set<String>] = [
        "Sources/RefreshdCore": ["HeapModule"],
        "Sources/RefreshdCalendar": ["RefreshdCore"],
        // The engine alone (issue 37): no host, no store of its own, no control socket.
        "Sources/RefreshdRuntime": ["RefreshdCore", "Logging"],
        // SQLite and the in-memory store, beside each other.
        "Sources/RefreshdStore": ["RefreshdCore", "CSQLite", "DequeModule"],
        // The shared database of several nodes (issue 24), beside the SQLite store.
        "Sources/RefreshdPostgres": ["RefreshdCore", "CLibPQ"],
        "Sources/RefreshdConfig": ["RefreshdCore", "RefreshdCalendar", "CLibYAML"],
        // The simulator with its host, on the in-memory store.
        "Sources/RefreshdSimulation": ["RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "RefreshdStore", "Logging"],
        "Sources/RefreshdStaging": ["RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "CJPEG", "CPNG"],
        "Sources/Refreshd": ["RefreshdCore", "RefreshdRuntime", "RefreshdStore", "CLibUV", "Logging"],
        "Sources/RefreshdDaemon": ["Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "RefreshdStore", "CLibUV",
                                   "CCurl", "Prometheus", "CoreMetrics", "Logging"],
        // What the dashboard shows sits above the daemon, without HTTP; its server above it.
        // Nothing below the server sees Hummingbird (issue 25), so the pages compile beside
        // Hummingbird's chain in a cold build (issue 36).
        "Sources/RefreshdDashboard": ["RefreshdDaemon", "Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdStore",
                                      "RefreshdSimulation", "CWebAssets", "Logging"],
        "Sources/RefreshdWeb": ["RefreshdDashboard", "RefreshdDaemon", "Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdStore",
                                "RefreshdSimulation", "Hummingbird", "HummingbirdCore", "ServiceLifecycle", "NIOCore", "Logging"],
        // The subcommands but `run`: no web server, so they compile beside Hummingbird's chain.
        "Sources/RefreshdCLI": ["Refreshd", "RefreshdDaemon", "RefreshdCore", "RefreshdRuntime", "RefreshdConfig", "RefreshdStore",
                                "RefreshdCalendar", "RefreshdSimulation", "RefreshdStaging", "ArgumentParser"],
        // `import Refreshd` alone: the embedding API re-exports the values it shows (issue 22).
        "Examples/Embedding": ["Refreshd"],
        // The benchmarks time each layer through its `package` declarations.
        "Benchmarks/Sources": ["Refreshd", "RefreshdCore", "RefreshdRuntime", "RefreshdStore", "RefreshdPostgres",
                               "RefreshdSimulation", "Logging"],
    ]

    /// The module an import line names (`import X`, `@testable import X`, `import struct X.Y`,
    /// `package import X`), or nil for other lines.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal"].contains(first) {
            words = words.dropFirst()
        }
        guard words.first == "import", words.count >= 2 else { return nil }
        words = words.dropFirst()
        let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
        if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
        return words.first.map { String($0.prefix { $0 != "." }) }
    }

    @Test func eachModuleImportsOnlyTheModulesBelowIt() throws {
        var problems: [String] = []
        for (folder, permitted) in Self.allowed.sorted(by: { $0.key < $1.key }) {
            let root = Repository.root + "/" + folder
            let files = try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.hasSuffix(".swift") }
            #expect(!files.isEmpty, "\(folder) has no sources")
            for file in files.sorted() {
                let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    guard let module = Self.importedModule(line), Self.governed.contains(module),
                          !permitted.contains(module) else { continue }
                    problems.append("\(folder)/\(file): imports \(module); expected only \(permitted.sorted().joined(separator: ", "))")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
