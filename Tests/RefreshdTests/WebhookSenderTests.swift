import Foundation
import Glibc
import Testing
import RefreshdCore
@testable import RefreshdDaemon

/// The webhook sender on libcurl (issue 36) keeps async-http-client's rules: 2xx delivered, a
/// redirect not followed (even to another scheme), the notifier's timeout for the whole attempt,
/// a large answer read and dropped; the headers the receiver relies on.
@Suite(.serialized) struct WebhookSenderTests {
    /// A loopback server that answers each connection with `answer` (nil: reads and never
    /// answers), keeping what it read. Stopped by closing its socket.
    final class CannedServer: @unchecked Sendable {
        let fd: Int32
        let port: Int
        private let lock = NSLock()
        private var requests: [String] = []

        init(answer: [UInt8]?) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
            let listener = fd
            Thread { [self] in
                while true {
                    let client = accept(listener, nil, nil)
                    guard client >= 0 else { return }
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    let n = read(client, &buffer, buffer.count)
                    if n > 0 { record(String(decoding: buffer[..<n], as: UTF8.self)) }
                    guard let answer else { continue }  // never answered, never closed
                    _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    close(client)
                }
            }.start()
        }

        private func record(_ request: String) { lock.withLock { requests.append(request) } }
        var received: [String] { lock.withLock { requests } }
        func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    static func notification(port: Int, timeout: Duration = .seconds(5)) -> RunNotification {
        RunNotification(id: "state-7-failure", kind: .failure, job: "app.job", runID: 7, outcome: .failure, exitStatus: 1,
                        signal: nil, started: nil, ended: Instant(milliseconds: 1_800_000_000_000), outputTail: ["boom"],
                        notifier: Notifier(.webhook(url: "http://127.0.0.1:\(port)/hook"), timeout: timeout))
    }

    /// Sends one notification and waits for its outcome.
    static func send(_ sender: WebhookSender, _ notification: RunNotification) -> NotificationOutcome? {
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        sender.send(notification) { result in
            outcome.set(result)
            done.signal()
        }
        _ = done.wait(timeout: .now() + 20)
        return outcome.value
    }

    final class OutcomeBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: NotificationOutcome?
        func set(_ value: NotificationOutcome) { lock.withLock { stored = value } }
        var value: NotificationOutcome? { lock.withLock { stored } }
    }

    @Test func aTwoHundredIsDeliveredWithTheHeadersAndALargeAnswerIsDropped() throws {
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 4 << 20)
        let server = try CannedServer(answer: Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
        defer { server.stop() }
        let sender = WebhookSender()
        defer { sender.shutdown() }
        #expect(Self.send(sender, Self.notification(port: server.port)) == .delivered)
        let request = try #require(server.received.first)
        #expect(request.hasPrefix("POST /hook HTTP/1.1\r\n"), "\(request)")
        #expect(request.contains("Content-Type: application/json\r\n"))
        #expect(request.contains("Idempotency-Key: state-7-failure\r\n"))
        #expect(request.contains("User-Agent: refreshd\r\n"))
        #expect(request.contains("\"job\":\"app.job\""), "\(request)")
    }

    @Test func aRedirectIsNotFollowedEvenToAnotherScheme() throws {
        let server = try CannedServer(answer: Array("HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n\r\n".utf8))
        defer { server.stop() }
        let sender = WebhookSender()
        defer { sender.shutdown() }
        #expect(Self.send(sender, Self.notification(port: server.port)) == .failed("HTTP 302"))
        #expect(server.received.count == 1)
    }

    @Test func aReceiverThatNeverAnswersTimesOutAtTheNotifiersTimeout() throws {
        let server = try CannedServer(answer: nil)
        defer { server.stop() }
        let sender = WebhookSender()
        defer { sender.shutdown() }
        let start = ContinuousClock.now
        #expect(Self.send(sender, Self.notification(port: server.port, timeout: .seconds(1))) == .failed("timed out after 1s"))
        let took = ContinuousClock.now - start
        #expect(took >= .milliseconds(900) && took < .seconds(5), "\(took)")
    }

    @Test func anAttemptInFlightAtTheStopFailsAndTheStopDoesNotWaitForIt() throws {
        let server = try CannedServer(answer: nil)
        defer { server.stop() }
        let sender = WebhookSender()
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        sender.send(Self.notification(port: server.port, timeout: .seconds(60))) { result in
            outcome.set(result)
            done.signal()
        }
        let deadline = Date().addingTimeInterval(5)
        while server.received.isEmpty && Date() < deadline { usleep(20_000) }
        #expect(!server.received.isEmpty)
        let start = ContinuousClock.now
        sender.shutdown()
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.value == .failed("refreshd stopped before the receiver answered"))
    }
}
