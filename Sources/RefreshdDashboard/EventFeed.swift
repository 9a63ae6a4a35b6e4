import Foundation
import RefreshdRuntime

/// The runtime's observations, fanned out to the SSE streams of open pages.
///
/// `publish` is called on the loop (the runtime's observer) and only appends under a lock and
/// yields to each stream's bounded buffer (the newest 256 kept): a page that does not read
/// loses old events, never holds the loop. At most `maxStreams` pages listen at once.
package final class EventFeed: @unchecked Sendable {
    package static let maxStreams = 64
    private let lock = Lock()
    private var streams: [Int: AsyncStream<RuntimeObservation?>.Continuation] = [:]
    private var next = 0

    /// A new stream, or nil when `maxStreams` are open.
    package func subscribe() -> (id: Int, events: AsyncStream<RuntimeObservation?>)? {
        let (stream, continuation) = AsyncStream<RuntimeObservation?>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id: Int? = lock.withLock {
            guard streams.count < Self.maxStreams else { return nil }
            next += 1
            streams[next] = continuation
            return next
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return (id, stream)
    }

    package func unsubscribe(_ id: Int) {
        let continuation = lock.withLock { streams.removeValue(forKey: id) }
        continuation?.finish()
    }

    func publish(_ observation: RuntimeObservation) {
        let targets = lock.withLock { Array(streams.values) }
        for continuation in targets { continuation.yield(observation) }
    }

    /// A keep-alive (nil) to every stream: a page that went away is noticed at the write.
    package func ping() {
        let targets = lock.withLock { Array(streams.values) }
        for continuation in targets { continuation.yield(nil) }
    }

    /// Ends every stream (the dashboard stopping).
    package func finishAll() {
        let all = lock.withLock { () -> [AsyncStream<RuntimeObservation?>.Continuation] in
            defer { streams.removeAll() }
            return Array(streams.values)
        }
        for continuation in all { continuation.finish() }
    }

    var count: Int { lock.withLock { streams.count } }
}
