import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// A job file's `limits:` (issue 35): read into the command's `JobLimits`, each bad value
/// refused at its file:line:column with what was expected.
@Suite struct LimitsReaderTests {
    static let header = "identifier: com.example.limited\ncommand: [true]\n"

    @Test func everyLimitIsReadAndCarriedWithTheCommand() throws {
        let config = try #require(TestSupport.config(Self.header + "limits: {memory: 256M, cpu: 50%, tasks: 64, nice: 10, io-weight: 50}\n"))
        let expected = JobLimits(memoryBytes: 256 << 20, cpuPercent: 50, tasks: 64, nice: 10, ioWeight: 50)
        #expect(config.limits == expected)
        #expect(config.spec.command.limits == expected)
        #expect(TestSupport.config(Self.header + "limits: {memory: 1G}\n")?.limits.memoryBytes == 1 << 30)
        #expect(TestSupport.config(Self.header + "limits: {memory: 2097152}\n")?.limits.memoryBytes == 2 << 20)
        #expect(TestSupport.config(Self.header + "limits: {cpu: 200%, nice: -5}\n")?.limits == JobLimits(cpuPercent: 200, nice: -5))
        #expect(TestSupport.config(Self.header)?.spec.command.limits.isEmpty == true)
    }

    @Test func badValuesAreLocatedWithWhatWasExpected() throws {
        var e = try #require(TestSupport.onlyError(Self.header + "limits: {memory: 256MB}\n"))
        #expect(e.position == "3:18")
        #expect(e.message == "limits.memory: expected \(LimitsReader.sizeExpected), found \"256MB\"")
        e = try #require(TestSupport.onlyError(Self.header + "limits:\n  memory: 512K\n"))
        #expect(e.position == "4:11")
        #expect(e.message.hasPrefix("limits.memory: expected a size like 256M or 1G"))
        e = try #require(TestSupport.onlyError(Self.header + "limits: {cpu: 50}\n"))
        #expect(e.position == "3:15")
        #expect(e.message == "limits.cpu: expected a percentage of one CPU like 50% or 200%, a whole number from 1% to 10000%, found \"50\"")
        e = try #require(TestSupport.onlyError(Self.header + "limits: {tasks: 0}\n"))
        #expect(e.message == "limits.tasks: expected a whole number from 1 to 4194304, found \"0\"")
        e = try #require(TestSupport.onlyError(Self.header + "limits: {nice: 20}\n"))
        #expect(e.message == "limits.nice: expected a whole number from -20 to 19, found \"20\"")
        e = try #require(TestSupport.onlyError(Self.header + "limits: {io-weight: 10001}\n"))
        #expect(e.message == "limits.io-weight: expected a whole number from 1 to 10000, found \"10001\"")
        e = try #require(TestSupport.onlyError(Self.header + "limits: {memroy: 1G}\n"))
        #expect(e.position == "3:10")
        #expect(e.message.contains("memroy") && e.message.contains("memory"))
        e = try #require(TestSupport.onlyError(Self.header + "limits: 1G\n"))
        #expect(e.message.hasPrefix("limits: expected a mapping with keys memory, cpu, tasks, nice, io-weight"))
    }

    /// Limits apply to a command: a job that runs a built-in action instead is refused at the key.
    @Test func limitsNeedACommand() throws {
        let yaml = """
            identifier: com.example.stage
            action: stage-playlist
            stage-playlist: {library: /srv/walls, switch-times: ["07:30"], families: [systemLarge], widget: w}
            limits: {memory: 64M}
            """
        let limits = try #require(TestSupport.onlyError(yaml))
        #expect(limits.position == "4:1")
        #expect(limits.message == "limits: apply to the job's command, and this job runs action: stage-playlist in refreshd; expected command:, or no limits:")
    }

    /// `simulate.memory:` is the modelled peak, read as `limits.memory` is.
    @Test func simulatedMemory() throws {
        #expect(TestSupport.config(Self.header + "simulate: {memory: 300M}\n")?.simulate?.memoryBytes == 300 << 20)
        let e = try #require(TestSupport.onlyError(Self.header + "simulate: {memory: lots}\n"))
        #expect(e.message == "simulate.memory: expected \(LimitsReader.sizeExpected), found \"lots\"")
    }
}
