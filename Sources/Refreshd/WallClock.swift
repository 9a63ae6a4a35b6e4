import Glibc
import RefreshdCore

/// The real wall clock, read only by the shell (the core takes instants as arguments).
enum WallClock {
    static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Instant(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}
