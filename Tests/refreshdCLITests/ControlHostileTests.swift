import Foundation
import RefreshdCore
import Testing

/// Hostile clients of the control socket against a real `refreshd run`: numbers out of range,
/// thousands of pipelined requests, idle connections by the hundred, subscribers that never
/// read, activity floods. Each attack runs while a 1 s heartbeat job launches, and the
/// heartbeat's lateness during it is measured and bounded.
@Suite(.serialized) struct ControlHostileTests {
    static let beat = """
        identifier: test.beat
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1s}
        """
    static let later = """
        identifier: test.later
        kind: processing
        command: ["/bin/true"]
        earliest: +1h
        """

    /// A refreshd with the heartbeat and a job to submit to; stopped and removed by `stop()`.
    final class Daemon {
        let box = Sandbox()
        let process: CLI.Running
        var socket: String { box.state + "/control.sock" }

        init(_ arguments: [String] = [], shell: String? = nil, jobs: [String: String] = [:], directory: String? = nil) throws {
            try box.write("beat.yaml", ControlHostileTests.beat)
            try box.write("later.yaml", ControlHostileTests.later)
            for (name, text) in jobs { try box.write(name, text) }
            let run = ["run", "--jobs", box.jobs, "--state", box.state] + arguments
            // At a raised priority (as a unit's Nice= would), so that what the heartbeat's
            // lateness measures is refreshd's loop under the attack, not the test machine's
            // other load (the suite and its builds share two cores). Without the privilege, nice
            // says so and runs it at the usual priority.
            let nice = ["/usr/bin/nice", "-n", "-10"]
            if let shell {
                // A shell sets limits first, then execs refreshd.
                process = try CLI.start(run, directory: directory, via: ["/bin/sh", "-c", shell + "; exec \"$0\" \"$@\""] + nice)
            } else {
                process = try CLI.start(run, directory: directory, via: nice)
            }
            let socket = self.socket
            let up = waitFor(timeout: 15) {
                guard let c = try? RawClient(socket) else { return false }
                return (try? c.request(#"{"v":1,"command":"hello"}"#))?["ok"] as? Bool == true
            }
            if !up { process.cleanUp(); box.remove() }
            try #require(up, "refreshd answers on its control socket")
        }

        var isAlive: Bool { !processIsGone(process.pid) }

        /// (earliest, started) of every heartbeat run that started at or after `since`.
        func beats(since: Instant) throws -> [(earliest: Instant, started: Instant)] {
            // A test at the client cap may be refused while the closes it just made have not
            // reached the loop (`too-many-clients`), and that refusal may come as a reset (the
            // server closed with the status line unread): the status is asked again, 5 s at most.
            var reply: [String: Any] = [:]
            for attempt in 0..<50 {
                if attempt > 0 { usleep(100_000) }
                guard let answer = try? RawClient(socket).request(#"{"v":1,"command":"status","runs":200}"#) else {
                    if attempt == 49 { throw POSIXError(.ECONNRESET) }
                    continue
                }
                reply = answer
                if reply["status"] != nil { break }
            }
            let runs = ((reply["status"] as? [String: Any])?["runs"] as? [[String: Any]]) ?? []
            return runs.compactMap { r in
                guard r["identifier"] as? String == "test.beat",
                      let e = (r["earliest"] as? String).flatMap(ISO8601.parse),
                      let s = (r["started"] as? String).flatMap(ISO8601.parse), s >= since else { return nil }
                return (e, s)
            }.reversed()
        }

        /// The heartbeat's worst lateness (ms) over the launches since `since`; requires some.
        func worstLateness(since: Instant, _ what: String) throws -> Int64 {
            let beats = try beats(since: since)
            try #require(!beats.isEmpty, "the heartbeat launched during \(what)")
            let worst = beats.map { $0.started.duration(since: $0.earliest).wholeMilliseconds }.max() ?? 0
            print("\(what): \(beats.count) heartbeat launches, worst lateness \(worst) ms")
            return worst
        }

        func stop() {
            process.signal(SIGTERM)
            let status = process.wait(timeout: 15)
            #expect(status == 0, "refreshd stops cleanly")
            process.cleanUp()
            box.remove()
        }
    }

    static func now() -> Instant { Instant(secondsSinceEpoch: Date().timeIntervalSince1970) }

    /// The heartbeat's lateness (ms) that counts as a stalled loop. An attack that blocks the
    /// loop (a client served to the end before the timer, an accept loop, a blocking write)
    /// makes launches seconds late; what remains below this is the CPU the rest of the suite
    /// takes from refreshd on 2 cores (57 ms seen once under CI, usually under 10 ms). The
    /// figure itself is printed by each test; BENCHMARKS.md reports it against the 50 ms target.
    static let stalled: Int64 = 200

    /// Waits until the heartbeat has launched at least `count` times after `since`.
    static func waitForBeats(_ daemon: Daemon, since: Instant, count: Int = 2) {
        _ = waitFor(timeout: 10) { ((try? daemon.beats(since: since))?.count ?? 0) >= count }
    }

    // MARK: - Numbers out of range

    @Test func outOfRangeNumbersAreRefusedByName() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let c = try RawClient(daemon.socket)
        // An earliest begin date centuries back: its lateness overflowed the metrics' nanoseconds.
        let old = try c.request(#"{"v":1,"id":1,"command":"submit","identifier":"test.later","earliest":"1700-01-01T00:00:00Z"}"#)
        #expect(old["ok"] as? Bool == false)
        #expect(Self.error(old)?.code == "bad-request")
        #expect(Self.error(old)?.message.contains("\"earliest\"") == true)
        #expect(Self.error(old)?.message.contains("expected an instant from") == true)
        let cli = try CLI.run(["ctl", "submit", "test.later", "--earliest", "1700-01-01T00:00:00Z", "--state", daemon.box.state])
        #expect(cli.status == 1 && cli.stderr.contains("\"earliest\""))
        // Days that overflowed the reload statistics' day arithmetic.
        let days = try c.request(#"{"v":1,"id":2,"command":"stats","days":1000000000000000}"#)
        #expect(Self.error(days)?.code == "bad-request")
        #expect(Self.error(days)?.message == "\"days\" is 1000000000000000; expected 1 to 3660 days")
        let runs = try c.request(#"{"v":1,"id":3,"command":"status","runs":1000000000}"#)
        #expect(Self.error(runs)?.message.contains("\"runs\" is 1000000000; expected 0 to 1000 runs") == true)
        let before = try c.request(#"{"v":1,"id":4,"command":"status","before":-5}"#)
        #expect(Self.error(before)?.message.contains("\"before\"") == true)
        let garbage = try c.request(#"{"v":1,"id":5,"command":"submit","identifier":"test.later","earliest":"tomorrow"}"#)
        #expect(Self.error(garbage)?.code == "bad-request")
        #expect(Self.error(garbage)?.message.contains("earliest") == true)
        // In range still works, and refreshd is alive.
        let ok = try c.request(#"{"v":1,"id":6,"command":"stats","days":3660}"#)
        #expect(ok["ok"] as? Bool == true)
        #expect(daemon.isAlive)
    }

    // MARK: - Status, bounded and paged

    @Test func statusRunsArePaged() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        Self.waitForBeats(daemon, since: Instant(milliseconds: 0), count: 4)
        let c = try RawClient(daemon.socket)
        let first = try c.request(#"{"v":1,"id":1,"command":"status","runs":2}"#)
        let page1 = ((first["status"] as? [String: Any])?["runs"] as? [[String: Any]]) ?? []
        let next = try #require((first["status"] as? [String: Any])?["nextBefore"] as? Int)
        #expect(page1.count == 2)
        #expect(page1.last?["runID"] as? Int == next)
        let second = try c.request(#"{"v":1,"id":2,"command":"status","runs":2,"before":\#(next)}"#)
        let page2 = ((second["status"] as? [String: Any])?["runs"] as? [[String: Any]]) ?? []
        #expect(page2.count == 2)
        #expect(page2.allSatisfy { ($0["runID"] as? Int ?? .max) < next })
        // The command line pages the same way, and refuses what the socket refuses.
        let cli = try CLI.run(["status", "--state", daemon.box.state, "--runs", "2", "--before", "\(next)", "--json"])
        let cliRuns = ((try? JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])?["runs"] as? [[String: Any]]) ?? []
        #expect(cliRuns.map { $0["runID"] as? Int } == page2.map { $0["runID"] as? Int })
        let tooMany = try CLI.run(["status", "--state", daemon.box.state, "--runs", "100000000"])
        #expect(tooMany.status != 0 && tooMany.stderr.contains("--runs"))
        // Stopped: the state file read read-only pages the same way.
        daemon.process.signal(SIGTERM)
        #expect(daemon.process.wait(timeout: 15) == 0)
        let offline = try CLI.run(["status", "--state", daemon.box.state, "--runs", "2", "--before", "\(next)", "--json"])
        let offlineRuns = ((try? JSONSerialization.jsonObject(with: Data(offline.stdout.utf8)) as? [String: Any])?["runs"] as? [[String: Any]]) ?? []
        #expect(offlineRuns.map { $0["runID"] as? Int } == page2.map { $0["runID"] as? Int })
    }

    // MARK: - Pipelining

    @Test func thousandsOfPipelinedRequestsDoNotStallTheLoop() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let start = Self.now()
        Self.waitForBeats(daemon, since: start)
        let c = try RawClient(daemon.socket)
        let later = ISO8601.format(Self.now() + .seconds(7200))
        let count = 3000
        var lines = ""
        for i in 1...count {
            lines += i % 2 == 0
                ? #"{"v":1,"id":\#(i),"command":"submit","identifier":"test.later","earliest":"\#(later)"}"# + "\n"
                : #"{"v":1,"id":\#(i),"command":"cancel","identifier":"test.later"}"# + "\n"
        }
        let attack = Self.now()
        // Written from another thread while this one reads the replies (the socket buffers fill).
        let text = lines
        let writer = Thread { [c] in c.send(text) }
        writer.start()
        var ids: [Int] = []
        while ids.count < count, let reply = c.readObject() {
            #expect(reply["ok"] as? Bool == true)
            ids.append(reply["id"] as? Int ?? -1)
        }
        let took = Self.now().duration(since: attack).wholeMilliseconds
        #expect(ids == Array(1...count), "every request answered, in order")
        Self.waitForBeats(daemon, since: attack, count: max(2, Int(took / 1000) + 1))
        let worst = try daemon.worstLateness(since: attack, "\(count) pipelined submits and cancels in \(took) ms")
        #expect(worst < Self.stalled)
        // The last request was a submit: saved, as its reply said.
        let pending = try RawClient(daemon.socket).request(#"{"v":1,"command":"pending"}"#)
        #expect(((pending["pending"] as? [[String: Any]]) ?? []).contains { $0["identifier"] as? String == "test.later" && $0["earliest"] as? String == later })
    }

    // MARK: - Clients, subscribers, descriptors

    /// Opens `count` clients; returns those accepted and the codes of the refusals.
    static func connect(_ count: Int, to socket: String) throws -> (kept: [RawClient], refused: [String]) {
        var kept: [RawClient] = []
        var refused: [String] = []
        for _ in 0..<count {
            let c = try RawClient(socket)
            if let reply = c.readObject(timeout: 0.2) {
                refused.append(error(reply)?.code ?? "?")
            } else {
                kept.append(c)
            }
        }
        return (kept, refused)
    }

    @Test func idleClientsAreCappedAndSubscribersToo() throws {
        let daemon = try Daemon(["--max-control-clients", "40"])
        defer { daemon.stop() }
        let attack = Self.now()
        var (kept, refused) = try Self.connect(60, to: daemon.socket)
        #expect(kept.count == 40)
        #expect(refused.count == 20 && refused.allSatisfy { $0 == "too-many-clients" })
        // Room for one more once one has gone.
        kept.removeLast()
        usleep(100_000)
        Self.waitForBeats(daemon, since: attack)
        #expect(try daemon.worstLateness(since: attack, "40 idle clients and 20 refused") < Self.stalled)
        kept.removeAll()

        // Subscribers that never read: 16 at most. The 39 closes above reach the loop as EOFs
        // in their own time (later on a loaded machine), so a `too-many-clients` answer means
        // "not yet" and the same subscriber tries again, for 10 s at most.
        var subscribers: [RawClient] = []
        var codes: [String] = []
        let deadline = Date().addingTimeInterval(10)
        for i in 0..<20 {
            while true {
                let c = try RawClient(daemon.socket)
                c.send(#"{"v":1,"id":\#(i),"command":"subscribe"}"# + "\n")
                let reply = c.readObject()
                if reply?["ok"] as? Bool == true { subscribers.append(c); break }
                let code = reply.flatMap(Self.error)?.code ?? "?"
                if code == "too-many-clients" && Date() < deadline { usleep(50_000); continue }
                codes.append(code)
                break
            }
        }
        #expect(subscribers.count == 16)
        #expect(codes == Array(repeating: "too-many-subscribers", count: 4))
        #expect(daemon.isAlive)
    }

    @Test func aSubscriberThatNeverReadsIsClosedAtItsCap() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let subscriber = try RawClient(daemon.socket)
        subscriber.send(#"{"v":1,"command":"subscribe"}"# + "\n")
        // Many activities, then updates: every loop turn's publications push a snapshot of all
        // of them to the subscriber, which reads nothing.
        let c = try RawClient(daemon.socket)
        var lines = ""
        for i in 0..<100 {
            let start = #"{\"activity\":\"start\",\"id\":\"s\#(i)\",\"type\":\"Download\",\"namespace\":\"ns\#(i % 20)\"}"#
            lines += #"{"v":1,"command":"activity","activity":"\#(start)"}"# + "\n"
        }
        for i in 0..<1500 {
            let update = #"{\"activity\":\"update\",\"id\":\"s\#(i % 100)\",\"priority\":\"low\",\"content\":{\"progress\":0.\#(i % 10)}}"#
            lines += #"{"v":1,"command":"activity","activity":"\#(update)"}"# + "\n"
        }
        let attack = Self.now()
        let text = lines
        Thread { [c] in c.send(text) }.start()
        var replies = 0
        while replies < 1600, c.readLine() != nil { replies += 1 }
        #expect(replies == 1600)
        // What the subscriber can still read is what the kernel buffered plus at most the cap:
        // then the end of the stream, since refreshd closed it.
        var read = 0
        var ended = false
        while let line = subscriber.readLine() {
            read += line.count + 1
            if read > 8 << 20 { break }
        }
        ended = read <= 8 << 20
        print("a subscriber that never read: closed after \(read) bytes")
        #expect(ended && read < (1 << 20) + (1 << 20), "closed near its 1 MiB cap")
        Self.waitForBeats(daemon, since: attack)
        // Measured, and bounded more loosely than elsewhere: each activity update rewrites the
        // activity's file in the shared container (two fsyncs, on the publisher thread), and
        // that flood of fsyncs slows the state's own commit before a launch, on a disk shared
        // with the rest of the suite (seen: usually under 50 ms, once 100 ms).
        #expect(try daemon.worstLateness(since: attack, "1600 activity requests with a stuck subscriber") < 250)
    }

    @Test func clientsNeverTakeTheDescriptorsLaunchesNeed() throws {
        // 320 descriptors in all; refreshd keeps 256 for launches, so about 40 for clients.
        let daemon = try Daemon(["--max-control-clients", "1000"], shell: "ulimit -n 320")
        defer { daemon.stop() }
        let attack = Self.now()
        var (kept, refused) = try Self.connect(300, to: daemon.socket)
        print("descriptor reserve: \(kept.count) clients kept, \(refused.count) refused")
        #expect(kept.count > 10 && kept.count < 80)
        #expect(!refused.isEmpty && refused.allSatisfy { $0 == "no-descriptors" })
        // Meanwhile the heartbeat still launches, and its runs succeed (no EMFILE at spawn).
        let count = kept.count
        kept.removeLast(5)  // room for the status queries (launches take the lowest free numbers)
        usleep(100_000)
        Self.waitForBeats(daemon, since: attack, count: 3)
        #expect(try daemon.worstLateness(since: attack, "\(count) clients at the descriptor reserve") < Self.stalled)
        let outcomes = try RawClient(daemon.socket).request(#"{"v":1,"command":"status","runs":50}"#)
        let beats = (((outcomes["status"] as? [String: Any])?["runs"] as? [[String: Any]]) ?? []).filter { $0["identifier"] as? String == "test.beat" }
        #expect(!beats.isEmpty && beats.allSatisfy { $0["outcome"] as? String == "success" || $0["outcome"] as? String == "running" })
        kept.removeAll()
    }

    // MARK: - Activities

    @Test func pipelinedActivityStartsAreBoundedAndRepliesSmall() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let c = try RawClient(daemon.socket)
        let count = 500
        var lines = ""
        for i in 0..<count {
            // 40 made-up namespaces: more than may have live activities (32).
            let activity = #"{\"activity\":\"start\",\"id\":\"a\#(i)\",\"type\":\"Download\",\"namespace\":\"ns\#(i % 40)\",\"content\":{\"progress\":0.5}}"#
            lines += #"{"v":1,"id":\#(i),"command":"activity","activity":"\#(activity)"}"# + "\n"
        }
        let attack = Self.now()
        let text = lines
        Thread { [c] in c.send(text) }.start()
        var bytes = 0
        var accepted = 0
        var codes: [String: Int] = [:]
        for _ in 0..<count {
            guard let line = c.readLine() else { break }
            bytes += line.count + 1
            let reply = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            if reply["ok"] as? Bool == true {
                accepted += 1
                let shown = ((reply["activities"] as? [String: Any])?["activities"] as? [[String: Any]]) ?? []
                #expect(shown.count == 1, "a reply shows the activity it started, not every activity")
            } else {
                codes[Self.error(reply)?.code ?? "?", default: 0] += 1
            }
        }
        print("\(count) pipelined activity starts: \(accepted) accepted, refused \(codes), \(bytes) bytes of replies")
        // 32 namespaces by 4 rounds reach the total of 128 held activities.
        #expect(accepted == 128)
        #expect(codes == ["too-many-activities": count - 128])
        #expect(bytes < 1_000_000)
        Self.waitForBeats(daemon, since: attack)
        #expect(try daemon.worstLateness(since: attack, "\(count) pipelined activity starts") < Self.stalled)
    }

    static func error(_ reply: [String: Any]) -> (code: String, message: String)? {
        guard let e = reply["error"] as? [String: Any], let code = e["code"] as? String, let message = e["message"] as? String else { return nil }
        return (code, message)
    }
}

/// A blocking Unix-socket client speaking raw JSON lines (10 s receive timeout).
final class RawClient: @unchecked Sendable {  // one writer thread and one reader at most
    let fd: Int32
    private var buffer: [UInt8] = []

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    /// Writes all of `text` (false if the peer went away).
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// The next line, without its newline; nil at end of stream or timeout.
    func readLine() -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 256 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// The next line as a JSON object if one comes within `timeout` seconds.
    func readObject(timeout: Double) -> [String: Any]? {
        if !buffer.contains(0x0A) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(timeout * 1000)) == 1 else { return nil }
        }
        return readObject()
    }

    /// The next line as a JSON object.
    func readObject() -> [String: Any]? {
        readLine().flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }

    /// Sends one request line and reads one reply.
    func request(_ line: String) throws -> [String: Any] {
        guard send(line + "\n"), let reply = readObject() else { throw POSIXError(.ECONNRESET) }
        return reply
    }
}
