import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdSimulation

/// The rules about the world that moved from the libuv host into the runtime (issue 22), as
/// input -> exact output: what a clock reading means, when conditions are read again. No
/// thread, timer or file: `BothHostsWorldRulesTests` shows both hosts carry them out.
@Suite struct ClockStepDetectorTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// Wall at t0 + `wall` ms, monotonic at 5000 s + `mono` ms.
    func reading(wall: Int64, mono: Int64) -> ClockReading {
        ClockReading(wall: Self.t0 + .milliseconds(wall), monotonic: .seconds(5000) + .milliseconds(mono))
    }

    @Test func wakeUpsWithTheClocksTogetherChangeNothing() {
        var d = ClockStepDetector(baseline: reading(wall: 0, mono: 0))
        #expect(d.observe(reading(wall: 60_000, mono: 60_000), .wakeUp) == nil)
        #expect(d.observe(reading(wall: 3_600_000, mono: 3_600_000), .wakeUp) == nil)
    }

    @Test func driftUpToOneSecondAtAWakeUpIsNoise() {
        var d = ClockStepDetector(baseline: reading(wall: 0, mono: 0))
        #expect(d.observe(reading(wall: 61_000, mono: 60_000), .wakeUp) == nil)   // exactly 1 s: slewing
        #expect(d.observe(reading(wall: 119_000, mono: 120_000), .wakeUp) == nil) // -1 s
        #expect(d.offset == reading(wall: 0, mono: 0).wall.milliseconds - reading(wall: 0, mono: 0).monotonic.wholeMilliseconds)
    }

    @Test func driftOverOneSecondAtAWakeUpIsAChangeMeasuredFromTheLastOffset() {
        var d = ClockStepDetector(baseline: reading(wall: 0, mono: 0))
        // Slept an hour: the wall clock moved on, the monotonic clock did not.
        #expect(d.observe(reading(wall: 3_660_000, mono: 60_000), .wakeUp) == Self.t0 + .seconds(60))
        // The new offset is the reference now: the next wake-up in step is quiet.
        #expect(d.observe(reading(wall: 3_720_000, mono: 120_000), .wakeUp) == nil)
        // Stepped back 1001 ms: a change (strictly over the tolerance).
        #expect(d.observe(reading(wall: 3_778_999, mono: 180_000), .wakeUp) == Self.t0 + .milliseconds(3_780_000))
    }

    @Test func slowDriftAddsUpUntilItIsOverTheTolerance() {
        var d = ClockStepDetector(baseline: reading(wall: 0, mono: 0))
        #expect(d.observe(reading(wall: 60_600, mono: 60_000), .wakeUp) == nil)
        // 1.2 s from the baseline, not from the last wake-up: the drift is measured, not each hop.
        #expect(d.observe(reading(wall: 121_200, mono: 120_000), .wakeUp) == Self.t0 + .seconds(120))
    }

    @Test func aClockSetNoticeIsAlwaysAChange() {
        var d = ClockStepDetector(baseline: reading(wall: 0, mono: 0))
        #expect(d.observe(reading(wall: 10_200, mono: 10_000), .clockSet) == Self.t0 + .seconds(10))  // 200 ms
        #expect(d.observe(reading(wall: 20_200, mono: 20_000), .clockSet) == Self.t0 + .milliseconds(20_200))  // none
        #expect(d.observe(reading(wall: 30_200, mono: 30_000), .wakeUp) == nil)
    }

    @Test func withoutABaselineTheFirstReadingIsOne() {
        var d = ClockStepDetector()
        #expect(d.observe(reading(wall: 99_000, mono: 0), .clockSet) == nil)
        #expect(d.observe(reading(wall: 99_000 + 7_200_000, mono: 10_000), .wakeUp) == Self.t0 + .seconds(109))
    }
}

@Suite struct ConditionsRereadTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    @Test func dueAnIntervalAfterWatchingStartsThenEveryInterval() {
        var r = ConditionsReread()
        #expect(r.interval == .seconds(60))
        #expect(r.due == nil)
        r.watching(true, at: Self.t0)
        #expect(r.due == Self.t0 + .seconds(60))
        #expect(r.timerFired(at: Self.t0 + .seconds(59)) == false)  // another deadline's wake-up
        #expect(r.due == Self.t0 + .seconds(60))
        #expect(r.timerFired(at: Self.t0 + .seconds(60)) == true)
        #expect(r.due == Self.t0 + .seconds(120))
        // A late wake-up (a loaded machine): the next one counts from it, no catching up.
        #expect(r.timerFired(at: Self.t0 + .seconds(150)) == true)
        #expect(r.due == Self.t0 + .seconds(210))
        r.watching(false, at: Self.t0 + .seconds(160))
        #expect(r.due == nil)
        #expect(r.timerFired(at: Self.t0 + .seconds(300)) == false)
    }

    /// A step back of an hour must not put the re-read off by an hour: it counts from the change.
    @Test func aClockChangeRestartsThePeriodFromNow() {
        var r = ConditionsReread()
        r.clockChanged(at: Self.t0)
        #expect(r.due == nil)  // not watching: nothing to re-read
        r.watching(true, at: Self.t0)
        r.clockChanged(at: Self.t0 - .seconds(3600) + .seconds(10))
        #expect(r.due == Self.t0 - .seconds(3600) + .seconds(70))
        r.clockChanged(at: Self.t0 + .seconds(7200))
        #expect(r.due == Self.t0 + .seconds(7260))
    }

    @Test func theIntervalIsAtLeastAMillisecond() {
        #expect(ConditionsReread(interval: .zero).interval == .milliseconds(1))
        #expect(ConditionsReread(interval: .seconds(-5)).interval == .milliseconds(1))
    }
}

/// The re-read inside the composition: one of the deadlines of the one timer, its effect
/// `.readConditions`.
@Suite struct MachinesConditionsRereadTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// The effects the re-read concerns (the timer, the watch, the read, launches).
    func relevant(_ effects: [SchedulerEffect]) -> [SchedulerEffect] {
        effects.filter {
            switch $0 {
            case .armTimer, .disarmTimer, .watchConditions, .readConditions, .launch: true
            default: false
            }
        }
    }

    @Test func aRequestWaitingOnTheNetworkIsReadForEveryMinuteUntilItRuns() throws {
        var core = SchedulerCore()
        core.declare(TaskDefinition(identifier: "t.net", kind: .processing, requiresNetworkConnectivity: true))
        var m = Machines(scheduler: core)
        var effects: [SchedulerEffect] = []
        m.handle(.restore(SchedulerCore.RestoredState()), at: Self.t0, into: &effects)
        effects.removeAll()
        m.handle(.submit(TaskRequest(identifier: "t.net", kind: .processing)), at: Self.t0, into: &effects)
        effects.removeAll()
        m.handle(.timerFired, at: Self.t0, into: &effects)
        // Due, conditions unknown: it waits; the host starts watching (and reads at once).
        #expect(relevant(effects) == [.watchConditions(true), .armTimer(at: Self.t0 + .seconds(60))])
        effects.removeAll()
        m.handle(.conditionsChanged(Conditions(externalPower: true, network: false)), at: Self.t0, into: &effects)
        #expect(relevant(effects) == [])
        effects.removeAll()
        m.handle(.timerFired, at: Self.t0 + .seconds(60), into: &effects)
        #expect(relevant(effects) == [.readConditions, .armTimer(at: Self.t0 + .seconds(120))])
        effects.removeAll()
        m.handle(.conditionsChanged(Conditions(externalPower: true, network: true)), at: Self.t0 + .seconds(61), into: &effects)
        let launched = try #require(effects.compactMap { if case let .launch(order) = $0 { order } else { nil } }.first)
        #expect(relevant(effects) == [.launch(launched), .watchConditions(false), .armTimer(at: launched.deadline)])
        #expect(m.conditionsReread.due == nil)
    }

    /// The wall clock stepped back an hour while a request waits: the next re-read is a minute
    /// after the step on the new clock, not an hour and a minute.
    @Test func aStepBackDoesNotPutTheRereadOff() {
        var core = SchedulerCore()
        core.declare(TaskDefinition(identifier: "t.net", kind: .processing, requiresNetworkConnectivity: true))
        var m = Machines(scheduler: core)
        var effects: [SchedulerEffect] = []
        m.handle(.restore(SchedulerCore.RestoredState()), at: Self.t0, into: &effects)
        m.handle(.submit(TaskRequest(identifier: "t.net", kind: .processing)), at: Self.t0, into: &effects)
        m.handle(.timerFired, at: Self.t0, into: &effects)
        m.handle(.conditionsChanged(Conditions(externalPower: true, network: false)), at: Self.t0, into: &effects)
        effects.removeAll()
        let back = Self.t0 - .seconds(3600) + .seconds(10)
        m.handle(.clockChanged(expected: Self.t0 + .seconds(10)), at: back, into: &effects)
        #expect(relevant(effects) == [.armTimer(at: back + .seconds(60))])
    }

    @Test func theIntervalComesFromTheRuntimeOptions() throws {
        let host = SimulatedHost(start: Self.t0)
        let runtime = try host.start(store: nil, options: .init(conditionsReread: .seconds(5)))
        #expect(runtime.lock.withLock { runtime.machines.conditionsReread.interval } == .seconds(5))
    }
}
