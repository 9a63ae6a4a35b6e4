
/// The results channel (fd 3) of each process run and its leader's exit, decided for both hosts
/// (issue 22): pure, the instant an argument. A host reports what it saw (bytes read on the
/// channel, the channel's close, the leader's exit); this decides what is kept, what the host
/// does (`.killGroup`, `.closeResults`) and when the run's work has ended.
///
/// The rules:
/// - **The cap.** At most `capacity` bytes are kept (`RunResults.maxLines` lines of
///   `RunResults.maxLineBytes`, each with its line end); the rest is read and dropped, and the
///   lines reported end with `RunResults.truncatedMarker`, which the runtime refuses with a
///   reason. A live line taken while the run goes on leaves the buffer, so live updates never
///   fill it.
/// - **The leader's exit kills its group.** When the leader exits, everything else in its
///   process group (and its cgroup) is killed at once: no straggler outlives it, and a child
///   that inherited the channel no longer holds it open.
/// - **The grace.** The end is reported when the channel has closed after the exit. If
///   something outside the group still holds it `grace` after the exit, the host stops reading
///   and the end is reported with what was read. The grace is one of the runtime's deadlines
///   (`nextDeadline`, on the host's one timer), so the simulator runs it in virtual time.
package struct ResultsChannels: Sendable {
    /// The most a run may write to its results channel.
    package static let capacity = RunResults.maxLines * (RunResults.maxLineBytes + 1)
    /// How long after the leader's exit to wait for the results channel to close.
    package static let grace: Duration = .milliseconds(500)

    /// One run's channel: what was kept, and where its run stands.
    package struct Channel: Sendable {
        package var bytes: [UInt8] = []
        /// Where the next unexamined byte starts.
        package var scanned = 0
        /// Where the line `nextLine` returned last starts (for `takeLine`).
        package var lastLine: Range<Int>?
        package var truncated = false
        package var closed = false
        package var exit: RunExit?
        /// The instant the grace ends (set at the exit while the channel is open).
        package var graceEnds: Instant?
    }

    package private(set) var channels: [Int64: Channel] = [:]
    /// The earliest grace that ends, if any run waits for its channel.
    package private(set) var nextDeadline: Instant?

    package init() {}

    /// Bytes the host read on the run's channel: kept up to the cap, the rest dropped and noted.
    /// `examined`: every complete line in them was offered already (`nextLine` skips them).
    package mutating func read(_ runID: Int64, _ chunk: UnsafeRawBufferPointer, examined: Bool = false) {
        guard !chunk.isEmpty else { return }
        var channel = channels.removeValue(forKey: runID) ?? Channel()
        let room = max(0, Self.capacity - channel.bytes.count)
        if chunk.count > room { channel.truncated = true }
        channel.bytes.append(contentsOf: chunk.prefix(room))
        if examined { channel.scanned = channel.bytes.count }
        channels[runID] = channel
    }

    /// Whether the run has bytes not yet examined (a line begun and not ended).
    package func isBuffering(_ runID: Int64) -> Bool {
        guard !channels.isEmpty, let channel = channels[runID] else { return false }
        return channel.scanned < channel.bytes.count
    }

    /// The next complete line read and not yet examined, if it is short enough to be a result
    /// (a longer one is left for the run's end, which refuses it with its length).
    package mutating func nextLine(_ runID: Int64) -> String? {
        guard var channel = channels[runID] else { return nil }
        defer { channels[runID] = channel }
        channel.lastLine = nil
        let newline = UInt8(ascii: "\n")
        while let end = channel.bytes[channel.scanned...].firstIndex(of: newline) {
            let start = channel.scanned
            channel.scanned = end + 1
            if end - start <= RunResults.maxLineBytes {
                channel.lastLine = start..<(end + 1)
                return String(decoding: channel.bytes[start..<end], as: UTF8.self)
            }
        }
        return nil
    }

    /// The line `nextLine` returned was taken (applied live): it leaves the buffer.
    package mutating func takeLine(_ runID: Int64) {
        guard var channel = channels[runID], let line = channel.lastLine else { return }
        channel.bytes.removeSubrange(line)
        channel.scanned -= line.count
        channel.lastLine = nil
        channels[runID] = channel
    }

    /// The host saw the channel close (every writer closed it).
    package mutating func closed(_ runID: Int64, into effects: inout [SchedulerEffect]) {
        var channel = channels.removeValue(forKey: runID) ?? Channel()
        channel.closed = true
        keepOrEnd(runID, channel, into: &effects)
    }

    /// The run's leader exited: its group is killed now; the end waits for the channel, at most
    /// `grace`. `closed`: the host saw the channel close with it (it was its last writer).
    package mutating func leaderExited(_ runID: Int64, exit: RunExit, closed: Bool = false, at now: Instant,
                               into effects: inout [SchedulerEffect]) {
        var channel = channels.removeValue(forKey: runID) ?? Channel()
        guard channel.exit == nil else {
            channels[runID] = channel
            return
        }
        channel.exit = exit
        if closed { channel.closed = true }
        effects.append(.killGroup(runID: runID))
        if !channel.closed {
            let ends = now + Self.grace
            channel.graceEnds = ends
            if nextDeadline.map({ ends < $0 }) ?? true { nextDeadline = ends }
        }
        keepOrEnd(runID, channel, into: &effects)
    }

    /// The one timer fired: each run whose grace has ended is reported with what was read, and
    /// its channel closed by the host.
    package mutating func timerFired(at now: Instant, into effects: inout [SchedulerEffect]) {
        guard let next = nextDeadline, next <= now else { return }
        for runID in channels.keys.sorted() {
            guard var channel = channels[runID], let ends = channel.graceEnds, ends <= now else { continue }
            channels[runID] = nil
            channel.closed = true
            effects.append(.closeResults(runID: runID))
            keepOrEnd(runID, channel, into: &effects)
        }
        recomputeDeadline()
    }

    /// The run ended some other way (or was reported): nothing of it is kept.
    package mutating func forget(_ runID: Int64) {
        guard !channels.isEmpty, let channel = channels.removeValue(forKey: runID) else { return }
        if channel.graceEnds != nil { recomputeDeadline() }
    }

    /// The lines a run's end reports: every line kept (blank ones dropped), then the marker if
    /// anything was dropped.
    package static func lines(of channel: Channel) -> [String] {
        var lines = channel.bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        if channel.truncated { lines.append(RunResults.truncatedMarker) }
        return lines
    }

    /// Keeps a channel taken out of `channels`, or, once it is closed after the exit, ends its run.
    private mutating func keepOrEnd(_ runID: Int64, _ channel: Channel, into effects: inout [SchedulerEffect]) {
        guard channel.closed, let exit = channel.exit else {
            channels[runID] = channel
            return
        }
        effects.append(.processEnded(runID: runID, exit: exit, results: channel.bytes.isEmpty && !channel.truncated ? [] : Self.lines(of: channel)))
        if channel.graceEnds != nil { recomputeDeadline() }
    }

    private mutating func recomputeDeadline() {
        nextDeadline = channels.values.compactMap(\.graceEnds).min()
    }
}
