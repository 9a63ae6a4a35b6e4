import RefreshdCore
import RefreshdRuntime
import RefreshdStore

extension RefreshRuntime {
    /// What `why` needs from the live runtime: its memory (`recent`: the identifier's
    /// observations, oldest first) and its store, read under its lock.
    package func whyFacts(_ id: String, recent: [RuntimeObservation]) throws -> WhyFacts {
        let memory = WhyFacts.Memory(snapshot: snapshot(), definitions: definitions, timelines: timelineSnapshot(),
                                     activities: activitySnapshot(), recent: recent,
                                     maxConcurrentRuns: options.configuration.maxConcurrentRuns)
        let jobs = Array(jobsInForce.values), now = now
        // A runtime without a store (an embedder's without a state directory) has no history.
        return try withStore { store in
            try WhyFacts.gather(id, store: store ?? InMemoryStore(), jobs: jobs, memory: memory, now: now)
        }
    }
}
