import Glibc

/// A pthread mutex; the scheduler's state is shared between the loop thread and callers.
///
/// `recursive` lets the thread that holds it take it again: the runtime's lock is held across a
/// group of control requests (`RefreshRuntime.grouped`) whose calls each take it.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init(recursive: Bool = false) {
        guard recursive else {
            pthread_mutex_init(mutex, nil)
            return
        }
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// `body` under the lock if it is free now, nil if another thread holds it: for a reader
    /// that must never wait (a cluster node's thread, whose deadlines cannot wait for a shard
    /// blocked in a commit).
    package func withLockIfFree<T>(_ body: () throws -> T) rethrows -> T? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
