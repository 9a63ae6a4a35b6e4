import Foundation
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// The control socket on a real libuv loop, spoken to over real Unix sockets.
@Suite(.serialized) struct ControlServerTests {
    /// A scheduler with a control server, its loop on a thread; `close()` stops and removes all.
    final class Served: @unchecked Sendable {
        let harness: LoopHarness
        let server: ControlServer
        var state: String { harness.directory + "/state" }

        init(limits: ControlServer.Limits = .init(), configuration: SchedulerConfiguration = .init(),
             register: (RefreshScheduler) -> Void = { _ in }, prepare: (ControlServer) -> Void = { _ in }) throws {
            harness = try LoopHarness(configuration: configuration, register: register)
            server = ControlServer(scheduler: harness.scheduler, stateDirectory: harness.directory + "/state", limits: limits)
            prepare(server)
            try server.start()
            harness.start()
        }

        func client() throws -> ControlClient { try ControlClient.connect(stateDirectory: state, timeout: .seconds(5)) }

        func close() {
            harness.stop()
            harness.removeDirectory()
        }
    }

    static func job(_ id: String, allowance: Duration = .seconds(30)) -> TaskDefinition {
        TaskDefinition(identifier: id, kind: .processing, allowance: allowance)
    }

    @Test func socketIsMode0600AndReplacesAStaleOne() throws {
        let harness = try LoopHarness()
        defer { harness.stop(); harness.removeDirectory() }
        let state = harness.directory + "/state"
        // A socket file left by a dead refreshd: bound, then its owner gone.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in for (i, b) in (state + "/control.sock").utf8.enumerated() { p[i] = b } }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        Glibc.close(stale)
        #expect(throws: ControlClient.Failure.self) { _ = try ControlClient.connect(stateDirectory: state) }

        let server = ControlServer(scheduler: harness.scheduler, stateDirectory: state)
        try server.start()
        harness.start()
        var info = stat()
        #expect(lstat(state + "/control.sock", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let reply = try ControlClient.connect(stateDirectory: state).request(ControlRequest(.hello))
        #expect(reply.ok && reply.hello?.pid == getpid())
        #expect(harness.stop())
        #expect(access(state + "/control.sock", F_OK) != 0, "the socket file is removed at stop")
    }

    @Test func somethingElseInTheWayIsNotReplaced() throws {
        let harness = try LoopHarness()
        defer { harness.removeDirectory() }
        let state = harness.directory + "/state"
        try "keep me".write(toFile: state + "/control.sock", atomically: true, encoding: .utf8)
        let server = ControlServer(scheduler: harness.scheduler, stateDirectory: state)
        #expect(throws: ControlFailure.self) { try server.start() }
        #expect((try? String(contentsOfFile: state + "/control.sock", encoding: .utf8)) == "keep me")
    }

    @Test func peerUIDRule() {
        #expect(PeerCredentials.allows(peerUID: 1000, serverUID: 1000))
        #expect(PeerCredentials.allows(peerUID: 0, serverUID: 1000))
        #expect(!PeerCredentials.allows(peerUID: 1001, serverUID: 1000))
        #expect(!PeerCredentials.allows(peerUID: 1000, serverUID: 0))
    }

    @Test func aForeignUIDIsRefusedAndOthersStillServed() throws {
        let served = try Served(prepare: { server in
            // Stand in another user for every second connection.
            server.peerUID = { $0.number % 2 == 1 ? 4242 : $0.peer?.uid }
        })
        defer { served.close() }
        let refused = try served.client()
        let reply = try refused.read()
        #expect(reply?.ok == false && reply?.error?.code == "permission-denied")
        #expect(reply?.error?.message.contains("uid 4242") == true)
        #expect(try refused.read() == nil, "closed after the refusal")
        #expect(try served.client().request(ControlRequest(.hello)).ok)
        #expect(PeerCredentials.of(socket: -1) == nil)
    }

    @Test func badInputGetsAnErrorAndTheConnectionGoesOn() throws {
        let served = try Served()
        defer { served.close() }
        let client = try served.client()
        let cases: [(String, String)] = [
            ("this is not json", "bad-json"),
            ("[1,2,3]", "bad-request"),
            (#"{"v":1}"#, "bad-request"),
            (#"{"v":1,"command":42}"#, "bad-request"),
            (#"{"v":2,"command":"pending"}"#, "unsupported-version"),
            (#"{"v":1,"id":9,"command":"frobnicate"}"#, "unknown-command"),
            (#"{"v":1,"command":"reload"}"#, "bad-request"),
            (#"{"v":1,"command":"reload","kind":"no.such"}"#, "unknown-kind"),
            (#"{"v":1,"command":"reload","kind":"w","all":true}"#, "bad-request"),
            (#"{"v":1,"command":"activity"}"#, "bad-request"),
            (#"{"v":1,"command":"activity","activity":"{\"activity\":\"start\",\"id\":\"a\"}"}"#, "bad-request"),
            (#"{"v":1,"command":"activity","activity":"{\"activity\":\"end\",\"id\":\"nope\"}"}"#, "unknown-activity"),
            (#"{"v":1,"command":"cancel"}"#, "bad-request"),
            (#"{"v":1,"command":"submit","identifier":"no.such"}"#, "not-declared"),
            (#"{"v":1,"command":"simulate-expiration","identifier":"no.such"}"#, "not-running"),
        ]
        for (line, code) in cases {
            try client.sendRaw(Array((line + "\n").utf8))
            let reply = try #require(try client.read())
            #expect(reply.ok == false, "\(line)")
            #expect(reply.error?.code == code, "\(line): \(reply.error?.description ?? "")")
        }
        let unknown = try client.request(ControlRequest(.hello))  // still served
        #expect(unknown.ok)
    }

    @Test func anOversizedLineIsRefusedAndClosed() throws {
        var limits = ControlServer.Limits()
        limits.maxLineBytes = 1024
        let served = try Served(limits: limits)
        defer { served.close() }
        let client = try served.client()
        try client.sendRaw([UInt8](repeating: UInt8(ascii: "x"), count: 4096))
        let reply = try client.read()
        #expect(reply?.error?.code == "line-too-long")
        #expect(try client.read() == nil)
        #expect(try served.client().request(ControlRequest(.hello)).ok)
    }

    @Test func aClientThatNeverReadsIsClosedAndTheLoopGoesOn() throws {
        var limits = ControlServer.Limits()
        limits.maxQueuedBytes = 64 * 1024
        let served = try Served(limits: limits)
        defer { served.close() }
        let silent = try served.client()
        // Ask for far more than it reads: replies pile up unread until the server gives up on it.
        let line = Array((#"{"v":1,"command":"hello"}"# + "\n").utf8)
        var sent = 0
        while sent < 200_000 {
            do { try silent.sendRaw(line) } catch { break }  // closed by the server
            sent += 1
        }
        #expect(sent < 200_000, "the server closed the silent client")
        // The others are served at once.
        let other = try served.client()
        let began = Date()
        #expect(try other.request(ControlRequest(.hello)).ok)
        #expect(Date().timeIntervalSince(began) < 1)
        #expect(served.harness.wait(timeout: 5) { Self.connectionCount(served) == 1 }, "only the new client is left")
        print("never-reading client: closed after \(sent) requests")
    }

    static func connectionCount(_ served: Served) -> Int {
        let box = CountBox()
        let done = DispatchSemaphore(value: 0)
        served.harness.scheduler.performOnLoop {
            box.value = served.server.connectionCount
            done.signal()
        }
        _ = done.wait(timeout: .now() + 2)
        return box.value
    }

    final class CountBox: @unchecked Sendable { var value = -1 }
}
