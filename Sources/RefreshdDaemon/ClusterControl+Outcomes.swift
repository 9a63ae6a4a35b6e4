import Foundation
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// Commands answered with what their leaders said (issue 32: one answer whatever the store).
/// A command queued for a shard's leader is applied there by the one function that answers it
/// on one machine (`performOperatorCommand`), which writes its reply into the applied record;
/// the node that queued it waits for that record and answers with it: `submitted X`, or the
/// refusal's own code (`unknown-instance`), never a bare "queued" that may fail unseen.
///
/// Nothing polls and nothing waits on the control loop: a leader's commit that applies commands
/// sends a NOTIFY (`commandsApplied`), and each wake-up reads the outcomes still awaited, on a
/// queue of their own. A command not applied within `answerWithin` (its shard has no leader
/// now, or the leader is cut off) is answered as queued: it stays queued durably and its next
/// leader applies it once.
extension ClusterControl {
    /// Commands queued for their leaders, and the reply their outcomes make (an outcome is
    /// absent when it did not come within `answerWithin`).
    struct Awaited: Sendable {
        var commands: [ShardCommand]
        var reply: @Sendable (_ outcomes: [String: Outcome]) -> ControlReply
    }

    /// What a leader said of one command (the applied record's value).
    struct Outcome: Sendable, Equatable {
        var ok: Bool
        var code: String?
        var message: String

        init(ok: Bool, code: String? = nil, message: String) {
            self.ok = ok
            self.code = code
            self.message = message
        }

        /// Reads `{"ok":...,"code":...,"message":...}`; an older record without it reads as done.
        init(record value: String) {
            let object = (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any] ?? [:]
            ok = object["ok"] as? Bool ?? true
            code = object["code"] as? String
            message = object["message"] as? String ?? "applied"
        }
    }

    /// One reply waiting for its commands' outcomes.
    final class Waiter: @unchecked Sendable {
        let awaited: Awaited
        let deliver: @Sendable (ControlReply) -> Void

        init(_ awaited: Awaited, deliver: @escaping @Sendable (ControlReply) -> Void) {
            self.awaited = awaited
            self.deliver = deliver
        }
    }

    /// Waits for `awaited`'s outcomes and hands its reply to `deliver` (on the outcomes' queue)
    /// once every command has one, or after `answerWithin` with those that came.
    func waitForOutcomes(_ awaited: Awaited, deliver: @escaping @Sendable (ControlReply) -> Void) {
        let waiter = Waiter(awaited, deliver: deliver)
        waiters.withLock { $0.append(waiter) }
        outcomes.asyncAfter(deadline: .now() + .milliseconds(Int(answerWithin.wholeMilliseconds))) { [self] in
            finish(waiter, final: true)
        }
        // Applied before the wait began (its NOTIFY already gone by): read once now.
        commandsApplied(id: nil, only: waiter)
    }

    /// A leader applied command `id` (any thread: the NOTIFY listener; nil: maybe any, after
    /// the listener reconnected): the replies waiting for it read its outcome. Wake-ups that
    /// come while a read is queued join it: one read of the outcomes of the commands named
    /// since (each a primary-key read), and only of those some reply waits for.
    func commandsApplied(id: String?, only waiter: Waiter? = nil) {
        let first = outcomesWanted.withLock { wanted in
            defer {
                if let waiter { wanted.waiters.append(waiter) } else if let id { wanted.ids.insert(id) } else { wanted.all = true }
            }
            return wanted.ids.isEmpty && !wanted.all && wanted.waiters.isEmpty
        }
        guard first else { return }
        outcomes.async { [self] in
            let wanted = outcomesWanted.withLock { wanted in
                defer { wanted = Wanted() }
                return wanted
            }
            let waiting = waiters.withLock { $0 }
            let fresh = Set(wanted.waiters.map(ObjectIdentifier.init))
            let asked = waiting.flatMap { waiter in
                waiter.awaited.commands.filter { wanted.all || wanted.ids.contains($0.id) || fresh.contains(ObjectIdentifier(waiter)) }
            }
            guard !asked.isEmpty, let read = try? database.appliedOutcomes(of: asked) else { return }
            // Every outcome read is one some reply waits for (`asked`).
            known.withLock { known in known.merge(read) { _, new in new } }
            for waiter in waiting {
                let outcomes = known.withLock { known in waiter.awaited.commands.compactMap { command in known[command.id].map { (command.id, $0) } } }
                if outcomes.count == waiter.awaited.commands.count {
                    finish(waiter, final: false, read: Dictionary(outcomes, uniquingKeysWith: { a, _ in a }))
                }
            }
        }
    }

    /// What the outcomes' queue is to read next (wake-ups join it).
    struct Wanted: Sendable {
        var ids: Set<String> = []
        var all = false
        var waiters: [Waiter] = []
    }

    /// Outcomes' queue: answers `waiter` once (with `read`, or what the database says now when
    /// `final`); a waiter already answered is left alone.
    private func finish(_ waiter: Waiter, final: Bool, read: [String: String]? = nil) {
        let present = waiters.withLock { list -> Bool in
            guard let index = list.firstIndex(where: { $0 === waiter }) else { return false }
            list.remove(at: index)
            return true
        }
        guard present else { return }
        // The outcomes known so far are forgotten with the reply.
        let known = known.withLock { known in
            defer { for command in waiter.awaited.commands { known[command.id] = nil } }
            return Dictionary(uniqueKeysWithValues: waiter.awaited.commands.compactMap { command in known[command.id].map { (command.id, $0) } })
        }
        let records = read ?? (final ? ((try? database.appliedOutcomes(of: waiter.awaited.commands.filter { known[$0.id] == nil })) ?? [:]).merging(known) { a, _ in a } : known)
        waiter.deliver(waiter.awaited.reply(records.mapValues(Outcome.init(record:))))
    }
}

extension ClusterControl.Awaited {
    /// One command's reply: its leader's own (with the shard and the command id), its
    /// refusal, or, not applied in time, `queued` with who leads the shard. `repeated`: the id
    /// was queued before (a retry), whose outcome is the first one's.
    static func one(_ command: ShardCommand, request: ControlRequest, queued: String, repeated: Bool,
                    now: @escaping @Sendable () -> Instant, within: Duration) -> Self {
        Self(commands: [command]) { outcomes in
            guard let outcome = outcomes[command.id] else {
                var reply = ControlReply(id: request.id, now: now())
                reply.message = queued + "; not applied within \(within.wholeMilliseconds) ms (the leader applies it once it can)"
                return reply
            }
            let prefix = repeated ? "already applied (command \(command.id) is applied once): " : ""
            let suffix = " (shard \(command.shard); command id \(command.id))"
            guard outcome.ok else {
                return .failure(id: request.id, ControlFailure(code: outcome.code ?? "refused", message: prefix + outcome.message + suffix))
            }
            var reply = ControlReply(id: request.id, now: now())
            reply.message = prefix + outcome.message + suffix
            return reply
        }
    }

    /// A command for several shards (one each): `queued` and how many leaders applied it; a
    /// refusal of any shard makes the reply that refusal, naming the shards.
    static func many(_ commands: [ShardCommand], request: ControlRequest, queued: String, now: @escaping @Sendable () -> Instant,
                     within: Duration) -> Self {
        Self(commands: commands) { outcomes in
            let refused = commands.compactMap { command in outcomes[command.id].flatMap { $0.ok ? nil : (command.shard, $0) } }
            if let first = refused.first {
                let shards = refused.map { "shard \($0.0): \($0.1.message)" }.joined(separator: "; ")
                return .failure(id: request.id, ControlFailure(code: first.1.code ?? "refused", message: queued + "; refused by \(refused.count) of \(commands.count): " + shards))
            }
            let applied = commands.filter { outcomes[$0.id] != nil }.count
            var reply = ControlReply(id: request.id, now: now())
            reply.message = queued + (applied == commands.count
                ? "; applied by \(applied == 1 ? "its leader" : "all \(applied) leaders")"
                : "; applied by \(applied) of \(commands.count) leaders within \(within.wholeMilliseconds) ms (the others apply it once they can)")
            return reply
        }
    }
}
