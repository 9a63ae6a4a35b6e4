import CLibUV
import RefreshdCore
import RefreshdRuntime

/// One built-in action run on libuv's thread pool (`uv_queue_work`), so it never blocks the
/// loop: the body runs on a worker thread, the completion on the loop thread.
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
