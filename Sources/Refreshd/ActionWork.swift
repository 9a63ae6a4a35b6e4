import CLibUV
import Foundation
import Glibc
import RefreshdCore
import RefreshdRuntime

/// One light built-in action (no `worker`) run on libuv's thread pool (`uv_queue_work`), so it
/// never blocks the loop: the body runs on a worker thread, the completion on the loop thread.
final class ActionWork: @unchecked Sendable {
    let order: LaunchOrder
    let action: BuiltInAction
    let context: ActionContext
    private let request = UnsafeMutablePointer<uv_work_t>.allocate(capacity: 1)
    private var result = ActionResult(success: false)
    private let completion: (ActionWork, ActionResult) -> Void

    init(order: LaunchOrder, action: BuiltInAction, context: ActionContext,
         completion: @escaping (ActionWork, ActionResult) -> Void) {
        self.order = order
        self.action = action
        self.context = context
        self.completion = completion
    }

    /// Queues the body on the pool; the completion runs on the loop thread once it returned.
    func queue(on loop: UnsafeMutablePointer<uv_loop_t>) {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let status = uv_queue_work(loop, request, { request in
            guard let data = request?.pointee.data else { return }
            let me = Unmanaged<ActionWork>.fromOpaque(data).takeUnretainedValue()
            me.result = me.action.body(me.context)
        }, { request, status in
            guard let data = request?.pointee.data else { return }
            let me = Unmanaged<ActionWork>.fromOpaque(data).takeRetainedValue()
            if status != 0 { me.result = ActionResult(success: false, log: ["cancelled before it ran"]) }
            me.completion(me, me.result)
        })
        if status != 0 {
            Unmanaged<ActionWork>.fromOpaque(request.pointee.data!).release()
            completion(self, ActionResult(success: false, log: ["could not queue: \(String(cString: uv_strerror(status)))"]))
        }
    }

    deinit { request.deallocate() }
}

/// A built-in action run in a worker process (`refreshd action-worker`): started, expired
/// (SIGTERM) and killed (SIGKILL) like a command, through the same `CommandProcess` (own session
/// and process group, stdout and stderr to the log, results on fd 3). Its stdout carries the
/// action's log lines, logged as the `log` stream as in-process actions' are.
enum ActionWorkerProcess {
    /// The executable that runs workers: `$REFRESHD_ACTION_WORKER`, else this program if it is
    /// `refreshd`, else a `refreshd` beside it (the test bundle's case); nil when none is found.
    static func executable() -> String? {
        if let explicit = getenv(ActionWorkerRequest.executableVariable), explicit.pointee != 0 {
            return String(cString: explicit)
        }
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink("/proc/self/exe", &buffer, 4096)
        guard count > 0 else { return nil }
        let own = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if own.hasSuffix("/refreshd") { return own }
        guard let slash = own.lastIndex(of: "/") else { return nil }
        let sibling = String(own[...slash]) + "refreshd"
        return access(sibling, X_OK) == 0 ? sibling : nil
    }

    /// Sends the runtime's signals to the worker's process group (from the loop thread).
    final class Signaller: @unchecked Sendable {
        let process: CommandProcess
        init(_ process: CommandProcess) { self.process = process }
        func send(_ signal: RunSignal) { process.signalGroup(signal == .terminate ? SIGTERM : SIGKILL) }
    }
}
