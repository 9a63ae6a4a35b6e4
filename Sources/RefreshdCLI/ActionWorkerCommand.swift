import ArgumentParser
import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdStaging
import Synchronization

/// Set by SIGTERM (the run's expiration): the action sees it as `isExpired`.
private let terminated = Atomic<Bool>(false)

/// `refreshd action-worker --request JSON` (hidden): runs one heavy built-in action for the
/// scheduler, out of its process (see `ActionWorkerRequest`). The address space is limited
/// (`RLIMIT_AS`) to what the worker has at its start plus the action's memory limit, so an
/// image that needs more fails to allocate here instead of taking the scheduler's memory.
package struct ActionWorkerCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: ActionWorkerRequest.subcommand,
        abstract: "Run one built-in action for the scheduler (internal).",
        shouldDisplay: false)

    @Option(help: "The run and the action, as JSON.")
    var request: String

    /// The built-in actions a worker can run, by name.
    static func action(named name: String, payload: String) -> BuiltInAction? {
        switch name {
        case StagePlaylist.actionName: StagePlaylist.action(payload: payload)
        default: nil
        }
    }

    package func run() throws {
        signal(SIGTERM) { _ in terminated.store(true, ordering: .releasing) }
        guard let request = try? JSONDecoder().decode(ActionWorkerRequest.self, from: Data(request.utf8)) else {
            Self.log("action-worker: the request does not decode")
            throw ExitCode.failure
        }
        guard let action = Self.action(named: request.action, payload: request.payload) else {
            Self.log("action-worker: no built-in action \(request.action) with this payload")
            throw ExitCode.failure
        }
        if let problem = Self.limitAddressSpace(adding: request.memoryLimit) { Self.log(problem) }
        let context = ActionContext(order: request.order, sharedContainer: request.sharedContainer,
                                    externalExpiry: { terminated.load(ordering: .acquiring) })
        let result = action.body(context)
        for line in result.log { Self.log(line) }
        for line in result.results { Self.writeAll(RunResults.descriptor, Array((line + "\n").utf8)) }
        throw result.success ? ExitCode.success : ExitCode.failure
    }

    /// Sets `RLIMIT_AS` to the current address space (VmSize) plus `bytes`; a message if it
    /// could not be set.
    static func limitAddressSpace(adding bytes: Int) -> String? {
        guard bytes > 0, bytes < Int.max / 2 else { return nil }
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let size = text.split(separator: "\n").first { $0.hasPrefix("VmSize:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }.map { $0 * 1024 }
        guard let size else { return "action-worker: cannot read VmSize; no memory limit set" }
        var limit = rlimit(rlim_cur: rlim_t(size + bytes), rlim_max: rlim_t(size + bytes))
        guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 else {
            return "action-worker: cannot limit memory: \(String(cString: strerror(errno)))"
        }
        return nil
    }

    static func log(_ line: String) {
        // One line on the pipe; escaping is idempotent, so the log handler's pass changes nothing.
        writeAll(STDOUT_FILENO, Array((EchoText.escaped(line, limit: nil) + "\n").utf8))
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n > 0 { written += n } else if n < 0, errno == EINTR { continue } else { return }
        }
    }
}
