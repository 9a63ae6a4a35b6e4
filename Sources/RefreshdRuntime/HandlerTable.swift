import RefreshdCore

/// The runtime's handlers by identifier: an interned slot per identifier (`IdentifierTable`) and
/// the handler in an array by slot. A `[String: TaskHandler]` kept about 120 B an identifier at a
/// million declared (twice as many buckets of a 16-byte key and a 64-byte optional handler).
/// Here a slot keeps an in-process closure itself (16 bytes and a tag) and a command or built-in
/// action as the index of its handler in `others` (a job file's worth, reused when the slot is
/// declared again); with the name once and a 4-byte index slot, about 48 B.
struct HandlerTable: Sendable {
    enum Stored: Sendable {
        case inProcess(@Sendable (RefreshTask) -> Void)
        case other(Int32)
    }

    private var table = IdentifierTable()
    private(set) var bySlot: ContiguousArray<Stored?> = []
    private(set) var others: ContiguousArray<TaskHandler> = []

    subscript(identifier: String) -> TaskHandler? {
        get {
            guard let slot = table.slot(of: identifier) else { return nil }
            switch bySlot[Int(slot)] {
            case nil: return nil
            case let .inProcess(body)?: return .inProcess(body)
            case let .other(index)?: return others[Int(index)]
            }
        }
        set {
            if newValue == nil, table.slot(of: identifier) == nil { return }
            let slot = Int(table.intern(identifier))
            if slot == bySlot.count { bySlot.append(nil) }
            switch newValue {
            case nil:
                bySlot[slot] = nil
            case let .inProcess(body)?:
                bySlot[slot] = .inProcess(body)
            case let handler?:
                if case let .other(index)? = bySlot[slot] {
                    others[Int(index)] = handler  // the slot's earlier command or action
                } else {
                    bySlot[slot] = .other(Int32(others.count))
                    others.append(handler)
                }
            }
        }
    }
}
