import RefreshdCore

/// The runtime's handlers by identifier: an interned slot per identifier (`IdentifierTable`) and
/// the handler in an array by slot. A `[String: TaskHandler]` kept about 120 B an identifier at a
/// million declared (twice as many buckets of a 16-byte key and a 40-byte handler); this keeps
/// the handler, the name once and a 4-byte index slot, about 64 B.
struct HandlerTable: Sendable {
    private var table = IdentifierTable()
    private var bySlot: ContiguousArray<TaskHandler?> = []

    subscript(identifier: String) -> TaskHandler? {
        get {
            guard let slot = table.slot(of: identifier) else { return nil }
            return bySlot[Int(slot)]
        }
        set {
            if newValue == nil, table.slot(of: identifier) == nil { return }
            let slot = Int(table.intern(identifier))
            if slot == bySlot.count { bySlot.append(nil) }
            bySlot[slot] = newValue
        }
    }
}
