import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
import RefreshdDaemon

/// `WhyFacts.gather`, the one gathering every asker uses (issue 37): a running scheduler's
/// memory, a cluster's database, the state files. Each answer reads a job's own runs by key,
/// however many runs of other jobs came since, and only the state files say refreshd is down.
@Suite struct WhyGatherTests {
    let now = Instant(milliseconds: 1_800_000_000_000)
    let jobs = [
        JobSpec(definition: TaskDefinition(identifier: "app.quiet"),
                command: CommandJob(argv: ["/bin/true"], environment: [:], workingDirectory: "/"), firstRequest: .core),
        JobSpec(definition: TaskDefinition(identifier: "app.busy"),
                command: CommandJob(argv: ["/bin/true"], environment: [:], workingDirectory: "/"), firstRequest: .core),
        JobSpec(definition: TaskDefinition(identifier: "app.wall", kind: .processing),
                command: CommandJob(argv: ["/bin/true"], environment: [:], workingDirectory: "/"),
                firstRequest: .core, widget: WidgetSpec(kind: "wall", families: ["systemSmall"])),
    ]

    /// `app.quiet` failed twice and `app.wall#systemSmall` ran once, then `app.busy` ran 600
    /// times; `app.quiet` is pending (a retry, an hour ahead) and `app.busy` has a run in flight.
    func store() throws -> InMemoryStore {
        let store = InMemoryStore()
        var changes: [StateChange] = []
        var runID: Int64 = 0
        func run(_ id: String, outcome: Outcome?) {
            runID += 1
            let started = now - .seconds(7200) + .seconds(Int64(runID))
            changes.append(.runStarted(RunRecord(runID: runID, identifier: id, kind: .appRefresh, submitted: started,
                                                 earliest: started, started: started, deadline: started + .seconds(30))))
            if let outcome {
                changes.append(.runEnded(runID: runID, identifier: id, ended: started + .milliseconds(500), outcome: outcome,
                                         exitStatus: outcome == .failure ? 2 : nil, signal: nil))
            }
        }
        run("app.quiet", outcome: .failure)
        run("app.quiet", outcome: .failure)
        run("app.wall#systemSmall", outcome: .success)
        run("app.gone[alice]", outcome: .success)
        for _ in 0..<600 { run("app.busy", outcome: .success) }
        run("app.busy", outcome: nil)
        changes.append(.failureStreak(identifier: "app.quiet", count: 2))
        changes.append(.savePending(PendingRequest(identifier: "app.quiet", namespace: "app", kind: .appRefresh,
                                                   earliest: now + .seconds(3600), submitted: now, sequence: 1, origin: .retry)))
        changes.append(.saveInstance(InstanceRecord(template: "app.gone", key: "alice", values: [:])))
        try store.apply(changes)
        return store
    }

    func memory(streak: Int) -> WhyFacts.Memory {
        let snapshot = SchedulerSnapshot(pending: [], runs: [], failureStreaks: [.init(identifier: "app.quiet", count: streak)],
                                         nextWakeUp: nil, isStopping: false, stopped: false, conditions: Conditions(),
                                         watchingConditions: false, nextRunID: 1, nextSequence: 1)
        return WhyFacts.Memory(snapshot: snapshot, definitions: TaskDefinitions(), timelines: TimelineMachine().snapshot(at: now),
                               activities: ActivityMachine().snapshot(), recent: [], maxConcurrentRuns: 4)
    }

    @Test func aJobsOwnRunsAreReadWhateverCameSinceFromEverySource() throws {
        let store = try store()
        for (memory, source) in [(memory(streak: 2), nil), (nil, WhyFacts.Source.database), (nil, .stateFiles)] {
            let facts = try WhyFacts.gather("app.quiet", store: store, jobs: jobs, memory: memory, source: source, now: now)
            #expect(facts.recentRuns.map(\.runID) == [2, 1], "\(String(describing: source))")
            #expect(facts.failureStreak == 2)
            let paragraph = WhyExplainer.explain(facts).paragraph
            #expect(paragraph.contains("Last runs: run 2 failure"), "\(paragraph)")
            #expect(!paragraph.contains("has not run yet"), "\(paragraph)")
        }
        // A timeline job's providers' runs too.
        let wall = try WhyFacts.gather("app.wall", store: store, jobs: jobs, memory: nil, now: now)
        #expect(wall.recentRuns.map(\.runID) == [3])
    }

    /// An instance whose template's file is gone (it ran, so it is explained as a job no file
    /// declares) is still said to be its template's.
    @Test func anInstanceOfATemplateNoFileDeclaresIsStillItsTemplates() throws {
        let store = try store()
        for memory in [memory(streak: 0), nil] {
            let facts = try WhyFacts.gather("app.gone[alice]", store: store, jobs: jobs, memory: memory, now: now)
            #expect(facts.instanceOf == "app.gone")
            #expect(WhyExplainer.explain(facts).paragraph.contains("app.gone[alice] is the instance alice of template app.gone"))
        }
    }

    @Test func onlyTheStateFilesSayRefreshdIsDown() throws {
        let store = try store()
        let files = WhyExplainer.explain(try WhyFacts.gather("app.quiet", store: store, jobs: jobs, memory: nil, now: now))
        #expect(!files.live && files.paragraph.contains("refreshd is not running: it launches at that date only if refreshd runs then"), "\(files.paragraph)")
        let database = WhyExplainer.explain(try WhyFacts.gather("app.quiet", store: store, jobs: jobs, memory: nil,
                                                                source: .database, now: now))
        #expect(database.live && !database.paragraph.contains("not running"), "\(database.paragraph)")
        #expect(database.paragraph.contains("It is a retry: backoff after 2 failures in a row"), "\(database.paragraph)")
        // The database knows a run without an end as the leader's run in flight.
        let busy = try WhyFacts.gather("app.busy", store: store, jobs: jobs, memory: nil, source: .database, now: now)
        #expect(busy.running?.runID == 605)
        #expect(WhyExplainer.explain(busy).paragraph.contains("app.busy is running now: run 605"))
        let busyFromFiles = try WhyFacts.gather("app.busy", store: store, jobs: jobs, memory: nil, now: now)
        #expect(busyFromFiles.running == nil)
    }
}
