/// What to do with calendar slots that passed while refreshd was down, the machine was asleep,
/// or the wall clock was stepped past them.
///
/// Like systemd's `Persistent=true` (`once`), Quartz's "do nothing" (`skip`) and Temporal's
/// catch-up window (`all`). A slot is never run twice, even when the clock steps back.
public enum MissedPolicy: String, Sendable, Hashable, CaseIterable {
    /// Run once as soon as possible, however many slots were missed (default).
    case once
    /// Run none of them; wait for the next slot.
    case skip
    /// Replay each missed slot, oldest first, one run at a time, within the catch-up window.
    case all
}
