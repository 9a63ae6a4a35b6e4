import CLibPQ
import RefreshdCore

/// The operator commands a node queues for a shard's leader (issue 24, `refreshd.commands`):
/// queued once by id with their NOTIFY, read by the leader, and what the leader said of each
/// (issue 32). Moved out of PostgresDatabase.swift (the schema, the pool and the leases).
extension PostgresDatabase {
    package func enqueueCommand(_ command: ShardCommand) throws -> Bool {
        try enqueueCommands([command]).contains(command.id)
    }

    /// Every command in one transaction, each newly queued one with its `NOTIFY` (delivered at
    /// the commit, waking the shard's leader at once): one commit for a batch split by shard.
    /// A NOTIFY of its own after each was a commit (a WAL flush) a shard.
    package func enqueueCommands(_ commands: [ShardCommand]) throws -> Set<String> {
        let context = commands.count == 1 ? "queueing command \(commands[0].id) for shard \(commands[0].shard)"
            : "queueing \(commands.count) commands"
        for command in commands { try checkShard(command.shard, context) }
        guard !commands.isEmpty else { return [] }
        return try transaction(context) { (c) throws(PostgresError) -> Set<String> in
            var queued: Set<String> = []
            for command in commands {
                let result = try c.execute("""
                    INSERT INTO refreshd.commands (id, shard, payload) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING
                    """, [.text(command.id), .int4(Int32(command.shard)), .text(command.payload)], context: context)
                guard result.changed == 1 else { continue }
                queued.insert(command.id)
                try c.execute("SELECT pg_notify('\(PostgresCommandListener.channel)', $1)", [.text("\(command.shard)")], context: context)
            }
            return queued
        }
    }

    package func pendingCommands(shard: Int) throws -> [ShardCommand] {
        let context = "reading shard \(shard)'s pending commands"
        try checkShard(shard, context)
        return try withConnection(context) { (c) throws(PostgresError) -> [ShardCommand] in
            let result = try c.execute("""
                SELECT id, shard, payload FROM refreshd.commands WHERE shard = $1 AND NOT applied ORDER BY position
                """, [.int4(Int32(shard))], context: context)
            return (0..<result.count).map {
                ShardCommand(id: result.string($0, 0), shard: result.int($0, 1), payload: result.string($0, 2))
            }
        }
    }

    /// One read-only transaction, one primary-key read a command.
    package func appliedOutcomes(of commands: [ShardCommand]) throws -> [String: String] {
        let context = "reading the outcomes of \(commands.count) command\(commands.count == 1 ? "" : "s")"
        return try transaction(context, readOnly: true) { (c) throws(PostgresError) -> [String: String] in
            var outcomes: [String: String] = [:]
            for command in commands {
                let result = try c.execute("""
                    SELECT value FROM refreshd.records WHERE shard = $1 AND table_name = $2 AND key = $3
                    """, [.int4(Int32(command.shard)), .bytes(ShardCommand.appliedTable), .bytes(command.id)], context: context)
                if result.count > 0 { outcomes[command.id] = result.string(0, 0) }
            }
            return outcomes
        }
    }
}
