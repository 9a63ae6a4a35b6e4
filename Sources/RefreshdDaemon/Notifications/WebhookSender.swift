import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(Benchmarks) import RefreshdCore
import Synchronization

/// POSTs failure and recovery notifications (issue 25) with AsyncHTTPClient, on one event-loop
/// thread of its own beside the libuv loop: `send` only starts a request and returns, the
/// outcome comes back on that thread. One attempt per call; retries are the machine's.
///
/// The body is the notification's JSON (`RunNotification.webhookBody`); `Idempotency-Key`
/// carries its stable id, so a receiver can drop the repeat a kill -9 between its answer and
/// refreshd's delivered commit can cause. 2xx is delivered; anything else (another status, a
/// refused connection, the notifier's timeout) is a failed attempt. Redirects are not followed
/// and the response body is read and dropped, never kept: a receiver cannot make refreshd hold
/// its answer in memory.
///
/// The thread and client are made at the first webhook (a refreshd whose jobs have none, and
/// whose state holds none, starts no thread).
final class WebhookSender: Sendable {
    private let state = Mutex<(group: MultiThreadedEventLoopGroup, client: HTTPClient)?>(nil)

    init() {}

    private var client: HTTPClient {
        state.withLock { state in
            if let state { return state.client }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
            state = (group, client)
            return client
        }
    }

    /// Starts one attempt; `done` is called once, on the client's thread.
    func send(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void) {
        guard case let .webhook(url) = notification.notifier.target else { return done(.failed("not a webhook")) }
        let request: HTTPClient.Request
        do {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Idempotency-Key", value: notification.id)
            headers.add(name: "User-Agent", value: "refreshd")
            request = try HTTPClient.Request(url: url, method: .POST, headers: headers, body: .string(notification.webhookBody))
        } catch {
            return done(.failed("bad URL: \(error)"))
        }
        let timeout = notification.notifier.timeout
        let deadline = NIODeadline.now() + .milliseconds(notification.notifier.timeoutMilliseconds)
        client.execute(request: request, delegate: StatusOnly(), deadline: deadline).futureResult.whenComplete { result in
            switch result {
            case let .success(status) where (200..<300).contains(status):
                done(.delivered)
            case let .success(status):
                done(.failed("HTTP \(status)"))
            case let .failure(error as HTTPClientError) where error == .deadlineExceeded:
                done(.failed("timed out after \(timeout.compactText)"))
            case let .failure(error):
                done(.failed("\(error)"))
            }
        }
    }

    /// Closes connections and the thread (at the daemon's end; blocks briefly).
    func shutdown() {
        guard let (group, client) = state.withLock({ state in defer { state = nil }; return state }) else { return }
        try? client.syncShutdown()
        try? group.syncShutdownGracefully()
    }

    /// Keeps the status code and drops the body as it arrives.
    private final class StatusOnly: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = UInt
        private var status: UInt = 0

        func didReceiveHead(task: HTTPClient.Task<UInt>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            status = head.status.code
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<UInt>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<UInt>) throws -> UInt { status }
    }
}
