import CLibUV
import Glibc
import RefreshdCore

/// Notices wall-clock steps and suspend/resume, and says what the clock would read without them.
///
/// Linux reports a step of CLOCK_REALTIME through a timerfd armed with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`: its read fails with ECANCELED. That fd is
/// watched with uv_poll, so a step is seen when it happens, not at the next wake-up. Suspend sets
/// no clock; it shows as a jump in the offset between CLOCK_REALTIME and CLOCK_MONOTONIC (which
/// stops while suspended), checked at every wake-up. In both cases `expected` is the monotonic
/// clock plus the offset from before the change.
final class ClockWatch {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let onChange: (_ expected: Instant) -> Void
    private let clock: WallClockSource
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var fd: Int32 = -1
    private var offset: Int64
    /// Offset drift below this is NTP slewing or scheduling noise, not a step.
    static let tolerance: Int64 = 1000

    init(loop: UnsafeMutablePointer<uv_loop_t>, clock: WallClockSource, onChange: @escaping (Instant) -> Void) {
        self.loop = loop
        self.clock = clock
        self.onChange = onChange
        offset = clock.now().milliseconds - Self.monotonicMilliseconds()
    }

    static func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    func offsetNow() -> Int64 { clock.now().milliseconds - Self.monotonicMilliseconds() }

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
        let n = read(fd, &expirations, 8)
        guard n < 0, errno == ECANCELED else { return }
        _ = arm()
        clockWasSet()
    }

    /// The clock was set (timerfd, or a test standing in for it): always report.
    func clockWasSet() {
        let previous = offset
        offset = offsetNow()
        onChange(Instant(milliseconds: Self.monotonicMilliseconds() + previous))
    }

    /// At a wake-up: report if the offset moved (a step we missed, or a resume from suspend).
    func checkOffset() {
        let now = offsetNow()
        guard abs(now - offset) > Self.tolerance else { return }
        let previous = offset
        offset = now
        onChange(Instant(milliseconds: Self.monotonicMilliseconds() + previous))
    }
}
