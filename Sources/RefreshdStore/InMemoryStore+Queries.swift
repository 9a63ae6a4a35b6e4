import RefreshdCore

// The in-memory store's ordered reads (what `StateStoring`'s queries answer), in SQLite's orders.

extension InMemoryStore.Tables {
    /// Counter rows, newest day first then by identifier, limited to the `days` most recent days.
    func countersOfLatestDays(_ days: Int?) -> [DailyCounter] {
        typealias Key = InMemoryStore.Key
        var rows = counters.joined().sorted { a, b in
            a.day != b.day ? Key.precedes(b.day, a.day) : Key(a.identifier) < Key(b.identifier)
        }
        if let days {
            var kept = 0
            var last: String?
            rows = Array(rows.prefix { row in
                if row.day != last {
                    last = row.day
                    kept += 1
                }
                return kept <= max(0, days)
            })
        }
        return rows
    }
}

extension InMemoryStore.Tables {
    /// Records in (table, key) byte order, of one table or of all.
    func orderedRecords(table: String? = nil) -> [MachineRecord] {
        let wanted = table.map(InMemoryStore.Key.init)
        return records.filter { wanted == nil || $0.key.table == wanted }
            .sorted { $0.key < $1.key }
            .map { MachineRecord(table: $0.key.table.string, key: $0.key.key.string, value: $0.value) }
    }
}
