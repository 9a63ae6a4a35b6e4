import CCurl
import Foundation
import RefreshdCore
import Synchronization

/// POSTs failure and recovery notifications (issue 25) with libcurl (Debian's, issue 36: it
/// replaced async-http-client, whose TLS stack and event loops were half of a cold build), on
/// one thread of its own beside the libuv loop, where a curl multi handle runs every attempt in
/// flight: `send` only queues a request and returns, the outcome comes back on that thread. One
/// attempt per call; retries are the machine's.
///
/// The body is the notification's JSON (`RunNotification.webhookBody`); `Idempotency-Key`
/// carries its stable id, so a receiver can drop the repeat a kill -9 between its answer and
/// refreshd's delivered commit can cause. 2xx is delivered; anything else (another status, a
/// refused connection, the notifier's timeout) is a failed attempt. Only http:// and https://,
/// redirects are not followed, no proxy is taken from the environment, and the response body is
/// read and dropped, never kept: a receiver cannot make refreshd hold its answer in memory.
///
/// The thread is made at the first webhook (a refreshd whose jobs have none, and whose state
/// holds none, starts no thread).
final class WebhookSender: Sendable {
    /// One attempt waiting for the thread.
    private struct Attempt: Sendable {
        var url: String
        var body: String
        var key: String
        var timeout: Duration
        var timeoutMilliseconds: Int64
        var done: @Sendable (NotificationOutcome) -> Void
    }

    /// The multi handle, shared only to wake its thread (`curl_multi_wakeup` is thread-safe).
    private struct Multi: @unchecked Sendable { var handle: UnsafeMutableRawPointer }

    private struct Shared {
        var queue: [Attempt] = []
        var multi: Multi?
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let finished = DispatchSemaphore(value: 0)

    init() {}

    /// Starts one attempt; `done` is called once, on the sender's thread.
    func send(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void) {
        guard case let .webhook(url) = notification.notifier.target else { return done(.failed("not a webhook")) }
        let attempt = Attempt(url: url, body: notification.webhookBody, key: notification.id,
                              timeout: notification.notifier.timeout,
                              timeoutMilliseconds: notification.notifier.timeoutMilliseconds, done: done)
        let (multi, refused) = shared.withLock { shared -> (Multi?, Bool) in
            guard !shared.stopping else { return (nil, true) }
            shared.queue.append(attempt)
            if let multi = shared.multi { return (multi, false) }
            // The first webhook: curl's global state, the multi handle and the thread.
            curl_global_init(Int(CURL_GLOBAL_DEFAULT))
            guard let handle = curl_multi_init() else { return (nil, false) }
            let multi = Multi(handle: handle)
            shared.multi = multi
            let thread = Thread { [self] in run(multi.handle) }
            thread.name = "refreshd-webhooks"
            thread.start()
            return (multi, false)
        }
        if refused { return done(.failed("refreshd is stopping")) }
        if let multi { curl_multi_wakeup(multi.handle) }
    }

    /// Ends the attempts in flight (failed: the next start sends them again) and the thread,
    /// at the daemon's end; waits at most 2 seconds.
    func shutdown() {
        let multi = shared.withLock { shared -> Multi? in
            shared.stopping = true
            return shared.multi
        }
        guard let multi else { return }
        curl_multi_wakeup(multi.handle)
        _ = finished.wait(timeout: .now() + 2)
    }

    /// An attempt in flight: what curl holds of it until it ends.
    private struct Transfer {
        var attempt: Attempt
        var headers: UnsafeMutablePointer<curl_slist>?
        var error: UnsafeMutablePointer<CChar>
    }

    /// The thread: starts what was queued, lets curl move every transfer, reports those that
    /// ended, and sleeps in `curl_multi_poll` until a socket is ready, a second has passed or
    /// `send` wakes it.
    private func run(_ multi: UnsafeMutableRawPointer) {
        var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
        func end(_ easy: UnsafeMutableRawPointer, _ outcome: NotificationOutcome) {
            guard let transfer = transfers.removeValue(forKey: easy) else { return }
            curl_multi_remove_handle(multi, easy)
            curl_easy_cleanup(easy)
            curl_slist_free_all(transfer.headers)
            transfer.error.deallocate()
            transfer.attempt.done(outcome)
        }
        while true {
            let (queued, stopping) = shared.withLock { shared in
                defer { shared.queue = [] }
                return (shared.queue, shared.stopping)
            }
            if stopping {
                for easy in Array(transfers.keys) { end(easy, .failed("refreshd stopped before the receiver answered")) }
                for attempt in queued { attempt.done(.failed("refreshd is stopping")) }
                break
            }
            for attempt in queued {
                if let (easy, transfer) = Self.start(attempt, in: multi) { transfers[easy] = transfer }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                      let transfer = transfers[easy] else { continue }
                let result = rd_curl_done_result(message)
                let status = rd_curl_status(easy)
                let outcome: NotificationOutcome
                if result == CURLE_OK && (200..<300).contains(status) {
                    outcome = .delivered
                } else if result == CURLE_OK {
                    outcome = .failed("HTTP \(status)")
                } else if result == CURLE_OPERATION_TIMEDOUT {
                    outcome = .failed("timed out after \(transfer.attempt.timeout.compactText)")
                } else {
                    let words = String(cString: transfer.error)
                    outcome = .failed(words.isEmpty ? String(cString: curl_easy_strerror(result)) : words)
                }
                end(easy, outcome)
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        curl_multi_cleanup(multi)
        finished.signal()
    }

    /// A new transfer for `attempt`, added to `multi`; nil (and the attempt failed) when curl
    /// refuses it.
    private static func start(_ attempt: Attempt, in multi: UnsafeMutableRawPointer) -> (UnsafeMutableRawPointer, Transfer)? {
        guard let easy = curl_easy_init() else {
            attempt.done(.failed("curl could not make a transfer"))
            return nil
        }
        var headers: UnsafeMutablePointer<curl_slist>?
        for header in ["Content-Type: application/json", "Idempotency-Key: \(attempt.key)", "User-Agent: refreshd", "Expect:"] {
            headers = curl_slist_append(headers, header)
        }
        let error = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        error.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        let body = Array(attempt.body.utf8)
        let code = body.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                rd_curl_prepare_post(easy, attempt.url, chars.baseAddress, chars.count, headers,
                                     Int(attempt.timeoutMilliseconds), error)
            }
        }
        guard code == CURLE_OK, curl_multi_add_handle(multi, easy) == CURLM_OK else {
            let words = code == CURLE_OK ? "curl could not start the transfer" : "bad URL: \(String(cString: curl_easy_strerror(code)))"
            curl_easy_cleanup(easy)
            curl_slist_free_all(headers)
            error.deallocate()
            attempt.done(.failed(words))
            return nil
        }
        return (easy, Transfer(attempt: attempt, headers: headers, error: error))
    }
}
