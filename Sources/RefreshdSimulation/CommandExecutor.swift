import Foundation
import RefreshdCore
import RefreshdRuntime

/// Runs a job's real command for `refreshd simulate --exec`, while the virtual clock is paused:
/// the command sees the runtime's environment plus `REFRESH_VIRTUAL_NOW`, runs to its end in real
/// time (killed after its allowance in real time), and its exit, output and results become the
/// modelled run, which takes no virtual time.
public enum CommandExecutor {
    public static func run(_ job: CommandJob, environment: [String], allowance: Duration) -> SimulatedHost.Behaviour {
        guard let program = job.argv.first else { return .init(startFailure: "empty command") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.contains("/") ? resolve(program, in: job.workingDirectory)
                                                                            : "/usr/bin/env")
        process.arguments = program.contains("/") ? Array(job.argv.dropFirst()) : job.argv
        if let directory = job.workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env: [String: String] = [:]
        for entry in environment {
            guard let eq = entry.firstIndex(of: "=") else { continue }
            env[String(entry[..<eq])] = String(entry[entry.index(after: eq)...])
        }
        if env["PATH"] == nil { env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin" }
        process.environment = env
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return .init(startFailure: "\(program): \(error.localizedDescription)")
        }
        let deadline = Date().addingTimeInterval(Double(allowance.wholeMilliseconds) / 1000)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning {
            if Date() > deadline { process.terminate() }
            usleep(1000)
        }
        let lines = String(decoding: data.prefix(256 * 1024), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: true).prefix(200).map(String.init)
        let exit: RunExit = process.terminationReason == .uncaughtSignal
            ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
        return .init(duration: .milliseconds(1), exit: exit, output: lines)
    }

    static func resolve(_ path: String, in directory: String?) -> String {
        path.hasPrefix("/") ? path : "\(directory ?? ".")/\(path)"
    }
}
