import CLibUV
import Glibc
import RefreshdCore

/// Hears the kernel say that the wall clock was set, and reads the clocks; what a reading means
/// (a step, a resume, noise) is the runtime's decision (`ClockStepDetector`), not this class's.
///
/// Linux reports a set of CLOCK_REALTIME (and, since 5.14, a resume from suspend) through a
/// timerfd armed with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`: its read fails with
/// ECANCELED. That fd is watched with uv_poll, so a step is reported when it happens; the host
/// also hands the runtime a reading at every wake-up.
final class ClockWatch {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let onSet: () -> Void
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var fd: Int32 = -1

    init(loop: UnsafeMutablePointer<uv_loop_t>, onSet: @escaping () -> Void) {
        self.loop = loop
        self.onSet = onSet
    }

    /// CLOCK_MONOTONIC: never set, stopped while the machine sleeps.
    static func monotonic() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }

    /// Both clocks now, the wall clock from `clock`.
    static func read(_ clock: WallClockSource) -> ClockReading {
        ClockReading(wall: clock.now(), monotonic: monotonic())
    }

    var isWatching: Bool { poll != nil }

    func start() {
        guard poll == nil else { return }
        fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0, arm() else { return }
        let p = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        guard uv_poll_init(loop, p, fd) == 0 else { p.deallocate(); Glibc.close(fd); fd = -1; return }
        p.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_poll_start(p, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<ClockWatch>.fromOpaque(data).takeUnretainedValue().timerfdReadable()
        }
        poll = p
    }

    func stop() {
        guard let p = poll else { return }
        poll = nil
        uv_poll_stop(p)
        closeAndFree(p)
        Glibc.close(fd)
        fd = -1
    }

    /// Arms the timerfd far in the future; it only ever wakes us by being cancelled.
    private func arm() -> Bool {
        var spec = itimerspec()
        spec.it_value.tv_sec = time(nil) + 10 * 365 * 86_400
        return timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil) == 0
    }

    private func timerfdReadable() {
        var expirations: UInt64 = 0
        let n = Glibc.read(fd, &expirations, 8)
        guard n < 0, errno == ECANCELED else { return }
        _ = arm()
        onSet()
    }
}
