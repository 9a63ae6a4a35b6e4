import Foundation
import RefreshdCore
import RefreshdRuntime

/// The runtime's observations, fanned out to the SSE streams of open pages.
///
/// `publish` is called on the loop (the runtime's observer) and only appends under a lock and
/// yields to each stream's bounded buffer (the newest 256 kept): a page that does not read
/// loses old events, never holds the loop. At most `maxStreams` pages listen at once.
final class EventFeed: @unchecked Sendable {
    static let maxStreams = 64
    private let lock = Lock()
    private var streams: [Int: AsyncStream<RuntimeObservation?>.Continuation] = [:]
    private var next = 0

    /// A new stream, or nil when `maxStreams` are open.
    func subscribe() -> (id: Int, events: AsyncStream<RuntimeObservation?>)? {
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

    func unsubscribe(_ id: Int) {
        let continuation = lock.withLock { streams.removeValue(forKey: id) }
        continuation?.finish()
    }

    func publish(_ observation: RuntimeObservation) {
        let targets = lock.withLock { Array(streams.values) }
        for continuation in targets { continuation.yield(observation) }
    }

    /// A keep-alive (nil) to every stream: a page that went away is noticed at the write.
    func ping() {
        let targets = lock.withLock { Array(streams.values) }
        for continuation in targets { continuation.yield(nil) }
    }

    /// Ends every stream (the dashboard stopping).
    func finishAll() {
        let all = lock.withLock { () -> [AsyncStream<RuntimeObservation?>.Continuation] in
            defer { streams.removeAll() }
            return Array(streams.values)
        }
        for continuation in all { continuation.finish() }
    }

    var count: Int { lock.withLock { streams.count } }
}

/// The last lines of output and results of recent runs, as the runtime logged them while this
/// refreshd ran (the store keeps no output: the journal does). Bounded: 20 lines of each kind
/// for each of the latest 300 runs.
final class RunTails: @unchecked Sendable {
    struct Tail: Sendable {
        var output: [String] = []
        var results: [String] = []
    }
    static let lines = 20
    static let runs = 300
    private let lock = Lock()
    private var tails: [Int64: Tail] = [:]
    private var order: [Int64] = []

    func record(_ observation: RuntimeObservation) {
        guard let run = observation.runID, observation.kind == .output || observation.kind == .results else { return }
        let text = observation.message
        lock.withLock {
            if tails[run] == nil {
                order.append(run)
                if order.count > Self.runs { tails[order.removeFirst()] = nil }
            }
            var tail = tails[run] ?? Tail()
            if observation.kind == .output {
                tail.output.append(text)
                if tail.output.count > Self.lines { tail.output.removeFirst() }
            } else {
                tail.results.append(text)
                if tail.results.count > Self.lines { tail.results.removeFirst() }
            }
            tails[run] = tail
        }
    }

    func tail(_ run: Int64) -> Tail? { lock.withLock { tails[run] } }
}
