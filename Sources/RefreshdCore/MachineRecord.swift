/// One saved record of a machine beside the scheduler core (a widget's timeline and budget
/// ledger, a live activity, a day's reload counters): a key in a table, its value as JSON text.
///
/// The stores keep records opaque, so a new machine persists its state without a schema
/// migration, and both stores fold them the same way: `putRecord` replaces the value at
/// (table, key), `deleteRecord` removes it. Tables and keys compare by their UTF-8 bytes.
package struct MachineRecord: Sendable, Hashable, Codable {
    /// The record's table, e.g. `widget` or `activity`.
    package var table: String
    /// Unique within its table.
    package var key: String
    /// The record itself, JSON text.
    package var value: String

    package init(table: String, key: String, value: String) {
        self.table = table
        self.key = key
        self.value = value
    }
}
