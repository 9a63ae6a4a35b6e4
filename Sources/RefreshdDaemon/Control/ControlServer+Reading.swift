import CLibUV
import RefreshdCore
import RefreshdRuntime

/// Reading clients within the loop turn's budget: at most `linesPerClientPerTurn` lines a
/// client and `linesPerTurn` in all; what is left waits, with reading paused, on the backlog
/// that a `uv_idle` handle serves at the next turn. A pipelining client thus never holds the
/// loop away from its timers.
extension ControlServer {
    func startReading(_ connection: ControlConnection) {
        guard !connection.reading, !connection.closing else { return }
        connection.reading = true
        uv_read_start(connection.stream, { handle, _, buf in
            guard let handle, let buf, let data = handle.pointee.data else { return }
            let connection = Unmanaged<ControlConnection>.fromOpaque(data).takeUnretainedValue()
            guard let server = connection.server else { buf.pointee = uv_buf_init(nil, 0); return }
            buf.pointee = uv_buf_init(server.readBuffer.assumingMemoryBound(to: CChar.self), 64 * 1024)
        }, { stream, count, _ in
            guard let stream, let data = stream.pointee.data else { return }
            let connection = Unmanaged<ControlConnection>.fromOpaque(data).takeUnretainedValue()
            connection.server?.received(connection, count: count)
        })
    }

    func stopReading(_ connection: ControlConnection) {
        guard connection.reading else { return }
        connection.reading = false
        uv_read_stop(connection.stream)
    }

    func received(_ connection: ControlConnection, count: Int) {
        guard count >= 0 else {  // EOF or error: the client is gone
            close(connection)
            return
        }
        guard !connection.closing, count > 0 else { return }
        connection.pending.append(contentsOf: UnsafeRawBufferPointer(start: readBuffer, count: count))
        serve(connection)
    }

    /// Handles what this turn allows of a client's complete lines. What is left waits, with
    /// reading paused, for the next turn (`idle`); a client busy with a status report waits for it.
    func serve(_ connection: ControlConnection) {
        guard !connection.closing else { return }
        if !connection.busy {
            let allowance = min(limits.linesPerClientPerTurn, turnBudget)
            var items: [Incoming] = []
            var start = 0
            while items.count < allowance, let newline = connection.pending[start...].firstIndex(of: 0x0A) {
                let line = connection.pending[start..<newline]
                start = newline + 1
                if line.count > limits.maxLineBytes {
                    tooLong(connection)
                    return
                }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                let item = decode(Array(line))
                items.append(item)
                if runsAlone(item) { break }
            }
            connection.pending.removeFirst(start)
            turnBudget -= items.count
            if !items.isEmpty { execute(items, from: connection) }
            guard !connection.closing else { return }
        }
        let complete = connection.pending.contains(0x0A)
        if !complete, connection.pending.count > limits.maxLineBytes { return tooLong(connection) }
        if connection.busy || complete {
            stopReading(connection)
            if complete, !connection.busy { wait(connection) }
        } else {
            startReading(connection)
        }
    }

    /// Puts a client with lines left on the backlog, served at the next turn.
    func wait(_ connection: ControlConnection) {
        guard !backlog.contains(where: { $0 === connection }) else { return }
        backlog.append(connection)
        if backlog.count == 1, let idle {
            uv_idle_start(idle) { handle in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<ControlServer>.fromOpaque(data).takeUnretainedValue().serveBacklog()
            }
        }
    }

    /// Once a turn while clients wait: each gets its share of this turn's lines, in order.
    func serveBacklog() {
        let waiting = backlog
        backlog.removeAll()
        for (index, connection) in waiting.enumerated() {
            if turnBudget <= 0 {
                for rest in waiting[index...] where !rest.closing { backlog.append(rest) }
                break
            }
            serve(connection)
        }
        if backlog.isEmpty, let idle { uv_idle_stop(idle) }
    }

    /// The loop turn's I/O is done: the next turn has a full line budget.
    func turnEnded() { turnBudget = limits.linesPerTurn }

    func tooLong(_ connection: ControlConnection) {
        reply(.failure(id: nil, ControlFailure(
            code: "line-too-long",
            message: "a request line is longer than \(limits.maxLineBytes) bytes; expected one JSON object per line; closing the connection")),
              to: connection)
        finish(connection)
    }
}
