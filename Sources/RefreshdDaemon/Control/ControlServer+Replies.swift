import Foundation
import RefreshdRuntime

/// Replies in a client's order (loop thread): at once, or after the replies it still awaits (a
/// status report read off the loop, a cluster node's command answered once its leaders applied
/// it). Moved out of ControlServer.swift.
extension ControlServer {
    func reply(_ reply: ControlReply, to connection: ControlConnection, changed: Bool = false) {
        if deferred != nil {
            deferred!.append((reply, changed))
            return
        }
        var bytes: [UInt8] = []
        append(reply, to: &bytes)
        send(bytes, to: connection)
    }

    /// Writes `bytes` (whole replies) in the client's order: at once, or after the replies it
    /// still awaits (`ControlConnection.awaiting`). A client that does not read is closed.
    func send(_ bytes: [UInt8], to connection: ControlConnection) {
        guard connection.awaiting.isEmpty else {
            let slot = ReplySlot()
            slot.bytes = bytes
            connection.awaiting.append(slot)
            return
        }
        if !connection.write(bytes, maxQueued: limits.maxQueuedBytes) { close(connection) }
    }

    /// Writes the client's replies that are ready, in order, up to the first still awaited; a
    /// client that waited for room reads on.
    func flushAwaiting(_ connection: ControlConnection) {
        let wasFull = connection.busy
        while let first = connection.awaiting.first, let bytes = first.bytes {
            connection.awaiting.removeFirst()
            guard !connection.closing else { continue }
            if !connection.write(bytes, maxQueued: limits.maxQueuedBytes) { return close(connection) }
        }
        if wasFull, !connection.busy, !connection.closing { serve(connection) }
    }

    /// A cluster node's reply that comes once the leaders applied the command (`ControlAnswer`):
    /// its place in the client's order is kept, and the client's next lines are served
    /// meanwhile (a batch of instance adds pipelines: the next batch is queued while the leaders
    /// apply this one), up to `ControlConnection.maxAwaiting` replies awaited at once.
    func answerLater(_ start: (@escaping @Sendable (ControlReply) -> Void) -> Void, _ request: ControlRequest,
                     _ connection: ControlConnection) {
        let slot = ReplySlot()
        connection.awaiting.append(slot)
        start { [self] reply in
            let failure = ControlReply.failure(id: request.id, ControlFailure(code: "internal", message: "the reply could not be encoded"))
            let bytes: [UInt8] = ((try? JSONEncoder.control.encode(reply)) ?? (try? JSONEncoder.control.encode(failure)) ?? Data()) + [0x0A]
            scheduler.performOnLoop { [weak self] in
                slot.bytes = bytes
                self?.flushAwaiting(connection)
            }
        }
    }

    /// Any thread: writes `bytes` to a busy client on the loop and serves its next lines.
    func resume(_ connection: ControlConnection, writing bytes: [UInt8]) {
        scheduler.performOnLoop { [weak self] in
            guard let self else { return }
            connection.busy = false
            guard !connection.closing else { return }
            send(bytes, to: connection)
            guard !connection.closing else { return }
            serve(connection)
        }
    }
}
