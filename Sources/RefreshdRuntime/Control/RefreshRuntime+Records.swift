import RefreshdCore

/// The side machines' saved records, read from the runtime's store under its lock, for the
/// control socket's `stats` (the store is not shared across threads otherwise).
extension RefreshRuntime {
    /// The `widget`, `widget-day` and `activities` records, decoded (nil without a store).
    package func savedMachineState() throws -> SavedMachineState? {
        try lock.withLock { () throws -> SavedMachineState? in
            guard let store else { return nil }
            return try SavedMachineState(store: store)
        }
    }

    /// One activity as the activity machine shows it (what a control request on it changed).
    package func activitySnapshot(of id: String) -> ActivitySnapshot {
        lock.withLock { machines.activities.snapshot(of: id) }
    }
}
