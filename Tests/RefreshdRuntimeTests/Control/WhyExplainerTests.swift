import Testing
import RefreshdCore
import RefreshdRuntime
import RefreshdDaemon

/// `why` for each holding reason, on plain facts.
@Suite struct WhyExplainerTests {
    let now = Instant(milliseconds: 1_800_000_000_000)
    let id = "app.feed"

    func pending(_ place: SchedulerSnapshot.Pending.Place?, earliest: Instant? = nil, origin: PendingRequest.Origin = .submitted,
                 power: Bool = false, network: Bool = false, heldUntil: Instant? = nil) -> SchedulerSnapshot.Pending {
        SchedulerSnapshot.Pending(identifier: id, namespace: "default", kind: .processing, earliest: earliest ?? now - .seconds(5),
                                  submitted: now - .seconds(60), sequence: 1, origin: origin, requiresExternalPower: power,
                                  requiresNetworkConnectivity: network, wake: earliest ?? now, place: place, heldUntil: heldUntil)
    }

    func run(_ identifier: String, _ runID: Int64) -> SchedulerSnapshot.Run {
        SchedulerSnapshot.Run(runID: runID, identifier: identifier, kind: .processing, started: now - .seconds(10),
                              deadline: now + .seconds(50), attempt: 1, phase: .running, stoppedByShutdown: false)
    }

    func explain(_ facts: WhyFacts) -> WhyReport {
        let report = WhyExplainer.explain(facts)
        #expect(!report.paragraph.isEmpty)
        return report
    }

    @Test func waitingForItsEarliestBeginDate() {
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: TaskDefinition(identifier: id),
                                 pending: pending(.queued, earliest: now + .seconds(600)), maxConcurrentRuns: 4))
        #expect(r.reasons == [.earliestBegin])
        #expect(r.paragraph.contains("in 10m"))
    }

    @Test func concurrencyCap() {
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: TaskDefinition(identifier: id),
                                 pending: pending(.queued), runsInFlight: [run("a.one", 1), run("a.two", 2)], maxConcurrentRuns: 2))
        #expect(r.reasons == [.concurrencyCap])
        #expect(r.paragraph.contains("2 of 2 runs in flight (a.one run 1, a.two run 2)"))
    }

    @Test func aRunInFlight() {
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: TaskDefinition(identifier: id),
                                 pending: pending(.blockedByRun), running: run(id, 7), runsInFlight: [run(id, 7)], maxConcurrentRuns: 4))
        #expect(r.reasons == [.running, .blockedByRun])
        #expect(r.paragraph.contains("run 7"))
    }

    @Test func conditions() {
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: TaskDefinition(identifier: id),
                                 pending: pending(.waitingOnConditions, power: true), maxConcurrentRuns: 4,
                                 conditions: Conditions(externalPower: false, network: true)))
        #expect(r.reasons == [.conditions])
        #expect(r.paragraph.contains("external power (now off)"))
    }

    @Test func admissionHold() {
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: TaskDefinition(identifier: id),
                                 pending: pending(.held, heldUntil: now + .seconds(90)), maxConcurrentRuns: 4))
        #expect(r.reasons == [.admissionHold])
        #expect(r.paragraph.contains("in 1m30s"))
    }

    @Test func backoffAfterFailures() {
        let def = TaskDefinition(identifier: id, retry: RetryPolicy(initial: .seconds(30), limit: 5))
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: def,
                                 pending: pending(.queued, earliest: now + .seconds(120), origin: .retry), maxConcurrentRuns: 4,
                                 failureStreak: 3))
        #expect(r.reasons == [.backoff, .earliestBegin])
        #expect(r.paragraph.contains("backoff after 3 failures"))
    }

    /// Issue 36: after Ctrl-C interrupted a run, `why` said "It is a retry: backoff after 1
    /// failure in a row". An interruption is not the job's fault: its attempt runs again, at once.
    @Test func aRerunOfAnInterruptedAttemptIsNoBackoff() {
        let def = TaskDefinition(identifier: id, retry: RetryPolicy(initial: .seconds(30), limit: 5))
        let interrupted = StatusReport.Run(RunRecord(runID: 9, identifier: id, kind: .processing, submitted: now, earliest: now,
                                                     started: now - .seconds(100), deadline: now, attempt: 3,
                                                     ended: now - .seconds(60), outcome: .interrupted))
        for streak in [0, 2] {
            let r = explain(WhyFacts(identifier: id, now: now, live: false, definition: def,
                                     pending: pending(nil, earliest: now - .seconds(60), origin: .retry),
                                     failureStreak: streak, recentRuns: [interrupted]))
            #expect(r.reasons.first == .interrupted, "\(r.reasons)")
            #expect(!r.reasons.contains(.backoff))
            #expect(!r.paragraph.contains("backoff after"), "\(r.paragraph)")
            #expect(r.paragraph.contains("It runs again the attempt run 9 was, interrupted when refreshd stopped or died: not the job's fault"),
                    "\(r.paragraph)")
            #expect(r.paragraph.contains("2 failures in a row before it still count") == (streak == 2), "\(r.paragraph)")
        }
    }

    /// Issue 36: a job failing 4 times in a row whose runs `why` was not given read "It has not
    /// run yet" (the facts now carry its own runs; without any, it does not claim it never ran).
    @Test func aFailingJobWithoutRunsAtHandIsNotSaidNeverToHaveRun() {
        let def = TaskDefinition(identifier: id, retry: RetryPolicy(initial: .seconds(30), limit: 5))
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: def,
                                 pending: pending(.queued, earliest: now + .seconds(120), origin: .retry), maxConcurrentRuns: 4,
                                 failureStreak: 4))
        #expect(!r.paragraph.contains("It has not run yet"), "\(r.paragraph)")
        #expect(r.paragraph.contains("the last 4 failed in a row"), "\(r.paragraph)")
    }

    @Test func retriesExhausted() {
        let def = TaskDefinition(identifier: id, retry: RetryPolicy(initial: .seconds(30), limit: 2))
        let runs = [StatusReport.Run(RunRecord(runID: 3, identifier: id, kind: .processing, submitted: now, earliest: now,
                                               started: now - .seconds(100), deadline: now, attempt: 3))]
        let r = explain(WhyFacts(identifier: id, now: now, live: true, definition: def, maxConcurrentRuns: 4,
                                 failureStreak: 3, recentRuns: runs))
        #expect(r.reasons == [.notPending, .retriesExhausted])
        #expect(r.paragraph.contains("run 3"))
    }

    @Test func missedSlotsAndRefreshdDown() {
        let schedule = Schedule("*-*-* 04:00") { $0 + .seconds(3600) }
        let def = TaskDefinition(identifier: id, resubmit: .calendar(schedule), missed: .skip)
        let r = explain(WhyFacts(identifier: id, now: now, live: false, definition: def,
                                 pending: pending(nil, earliest: now - .seconds(7200)), missedByDay: [(day: "2027-01-15", count: 2)]))
        #expect(r.reasons == [.refreshdDown, .missedSlots])
        #expect(r.paragraph.contains("refreshd is not running"))
        #expect(r.paragraph.contains("missed: skip"))
    }

    @Test func notDeclared() {
        let r = explain(WhyFacts(identifier: "no.such", now: now, live: true, knownUndeclared: true))
        #expect(r.reasons == [.notDeclared])
    }

    /// `why` of a provider whose widget's reload waits for the minimum interval names the
    /// interval, not the budget (the machine's `spaced`; the text is the edge's).
    @Test func aReloadHeldByTheMinimumIntervalIsNotSaidToWaitForTheBudget() {
        var machine = TimelineMachine()
        let kind = "single"
        _ = machine.handle(.declare(WidgetDefinition(kind: kind, families: [.systemSmall], job: "single.provider",
                                                     budget: .limited(50), minReloadInterval: .seconds(300))), at: now)
        _ = machine.handle(.restore(.init()), at: now)
        let timeline = Timeline(entries: [TimelineEntry(date: now, content: "{}")], policy: .atEnd)
        _ = machine.handle(.providerFinished(WidgetID(kind: kind, family: .systemSmall),
                                             .timeline(timeline, upstreamFetch: false)), at: now + .seconds(2))
        let at = now + .seconds(60)
        let widget = machine.snapshot(at: at).widgets.first
        let r = explain(WhyFacts(identifier: "single.provider#systemSmall", now: at, live: true, widget: widget))
        #expect(r.reasons.contains(.widgetSpacing))
        #expect(!r.reasons.contains(.widgetBudget))
        #expect(r.paragraph.contains("A reload is spaced: at most one every min-reload-interval, and the last was too recent; "
            + "it is released at \(now + .seconds(300)) (in 4m), when the interval ends (budget: 1 of 50 reloads used in the "
            + "last 1d, 49 left)."), "\(r.paragraph)")
        #expect(!r.paragraph.contains("deferred for the budget"))
    }
}

