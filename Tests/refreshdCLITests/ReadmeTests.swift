import Foundation
import Testing
import RefreshdTestSupport

/// The README's examples run as written: every ```yaml block passes `refreshd check`, every
/// `refreshd ...` line of a ```sh block parses, every option the usage table names exists, and
/// every ```json block is JSON.
@Suite struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The fenced blocks of README.md whose info string is `language`, with the line each starts on.
    static func blocks(_ language: String) throws -> [(line: Int, text: String)] {
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        var blocks: [(line: Int, text: String)] = []
        var current: (line: Int, lines: [String])?
        var inOtherBlock = false
        for (index, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let block = current {
                if trimmed == "```" {
                    blocks.append((block.line, block.lines.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    current?.lines.append(String(line))
                }
            } else if trimmed.hasPrefix("```") {
                if inOtherBlock {
                    inOtherBlock = false
                } else if trimmed.dropFirst(3) == language {
                    current = (index + 2, [])
                } else {
                    inOtherBlock = true
                }
            }
        }
        return blocks
    }

    /// Regression: the first job-file example put `requires:` on an app-refresh job.
    @Test func everyYAMLBlockPassesCheck() throws {
        let blocks = try Self.blocks("yaml")
        #expect(blocks.count >= 2)
        for block in blocks {
            // A project of its own whose Scripts/ is the real one: relative commands in the
            // README must name scripts that exist in the repository.
            let box = Sandbox()
            defer { box.remove() }
            try FileManager.default.createSymbolicLink(atPath: box.root + "/Scripts", withDestinationPath: Self.root + "/Scripts")
            try box.write("example.yaml", block.text)
            let r = try CLI.run(["check", box.jobs])
            #expect(r.status == 0, "README.md:\(block.line): the yaml block fails refreshd check:\n\(r.stdout)\(r.stderr)")
        }
    }

    /// Every ```yaml scenario block is a scenario file that passes `refreshd test` as written.
    @Test func everyScenarioBlockPasses() throws {
        let blocks = try Self.blocks("yaml scenario")
        #expect(blocks.count >= 1)
        for block in blocks {
            let box = Sandbox()
            defer { box.remove() }
            let path = box.root + "/scenario.yaml"
            try block.text.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try CLI.run(["test", path])
            #expect(r.status == 0, "README.md:\(block.line): the scenario block fails refreshd test:\n\(r.stdout)\(r.stderr)")
            #expect(r.stdout.hasSuffix("1 passed, 0 failed\n"))
        }
    }

    /// Each `refreshd ...` line of the sh blocks, from the repository root: `run` with `--help`
    /// added (it would not return), the others for real. ArgumentParser exits 64 on a usage error.
    @Test func everyRefreshdLineInShBlocksParses() throws {
        let lines = try Self.blocks("sh").flatMap { block in
            block.text.split(separator: "\n").enumerated().map { (block.line + $0.offset, String($0.element)) }
        }
        var checked = 0
        for (line, text) in lines {
            let words = shellWords(text)
            guard let program = words.first, program == "refreshd" || program.hasSuffix("/refreshd") else { continue }
            var arguments = Array(words.dropFirst())
            let subcommand = try #require(arguments.first, "README.md:\(line): no subcommand")
            if subcommand == "run" { arguments.append("--help") }
            let r = try CLI.run(arguments, directory: Self.root)
            #expect(r.status != 64 && !r.stderr.contains("Usage:"), "README.md:\(line): \(text)\n\(r.stderr)")
            if subcommand == "run" || subcommand == "check" || subcommand == "calendar" {
                #expect(r.status == 0, "README.md:\(line): \(text)\n\(r.stdout)\(r.stderr)")
            }
            try expectOptionsExist(arguments.filter { $0.hasPrefix("--") && $0 != "--help" }, in: subcommand,
                                   "README.md:\(line)")
            checked += 1
        }
        #expect(checked >= 4)
    }

    /// Every `--option` in the usage table's `refreshd SUBCOMMAND ...` cells is one the
    /// subcommand has.
    @Test func everyOptionInTheUsageTableExists() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        var checked = 0
        for line in readme.split(separator: "\n") where line.hasPrefix("| `refreshd ") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            let words = cell.split(separator: " ").map(String.init)
            let options = words.filter { $0.hasPrefix("[--") || $0.hasPrefix("--") }
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
            try expectOptionsExist(options, in: words[1], "usage table: \(cell)")
            checked += 1
        }
        #expect(checked == 6)
    }

    /// Issue 36: the README offered `swift run refreshd status`, which builds a second, debug
    /// binary (a minute of compiling right after Scripts/test). One way: the built binary.
    @Test func theBinaryIsTheBuiltOneNotSwiftRun() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        #expect(!readme.contains("swift run refreshd "), "README offers `swift run refreshd`")
        #expect(readme.contains("the binary is `.build/release/refreshd`"))
        let run = try String(contentsOfFile: Self.root + "/Scripts/run", encoding: .utf8)
        #expect(run.contains("bin=.build/release/refreshd"), "Scripts/run runs the binary the README names")
    }

    @Test func everyJSONBlockIsJSON() throws {
        for block in try Self.blocks("json") {
            #expect((try? JSONSerialization.jsonObject(with: Data(block.text.utf8))) != nil,
                    "README.md:\(block.line): not JSON")
        }
    }

    private func expectOptionsExist(_ options: [String], in subcommand: String, _ place: String) throws {
        let help = try CLI.run([subcommand, "--help"])
        #expect(help.status == 0, "\(place): refreshd \(subcommand) --help failed")
        for option in options {
            let name = option.split(separator: "=").first.map(String.init) ?? option
            #expect(help.stdout.contains(name + " ") || help.stdout.contains(name + "\n"),
                    "\(place): refreshd \(subcommand) has no option \(name)")
        }
    }
}
