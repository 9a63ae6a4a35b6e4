import CLibUV

/// A libuv timer that calls back once, on the loop thread, unless stopped or restarted first.
///
/// For the shell's own housekeeping deadlines (a reload that takes too long), never for
/// scheduling: every scheduling deadline goes through the core's single wake-up timer.
package final class OneShotTimer {
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    private var callback: (() -> Void)?
    private var closed = false

    package init(loop: UnsafeMutablePointer<uv_loop_t>) {
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Calls `body` after `delay` (replacing any pending call).
    package func start(after delay: Duration, _ body: @escaping () -> Void) {
        guard !closed else { return }
        callback = body
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let me = Unmanaged<OneShotTimer>.fromOpaque(data).takeUnretainedValue()
            let body = me.callback
            me.callback = nil
            body?()
        }, UInt64(max(0, delay.wholeMilliseconds)), 0)
    }

    package func stop() {
        callback = nil
        if !closed { uv_timer_stop(timer) }
    }

    /// Stops and frees the handle; no callback reaches this object afterwards.
    package func close() {
        guard !closed else { return }
        stop()
        closed = true
        closeAndFree(timer)
    }
}
