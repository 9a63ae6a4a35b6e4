import Testing
import RefreshdCore
import RefreshdRuntime

/// The reload rules as input -> exact effects: coalescing, abandonment after the timeout with
/// the running config kept, and their log lines. No thread, timer or file: the daemon's tests
/// show the host carries these effects out.
@Suite struct ReloadMachineTests {
    func machine() -> ReloadMachine { ReloadMachine(directory: "/etc/refreshd/Jobs", timeout: .seconds(10)) }

    @Test func aRequestArmsTheTimerAndStartsARead() {
        var m = machine()
        #expect(m.handle(.requested(reason: "SIGHUP")) == [.armTimer(after: .seconds(10), generation: 1), .startRead(generation: 1)])
        #expect(m.underway == ReloadMachine.Read(generation: 1, reason: "SIGHUP"))
        #expect(m.handle(.readFinished(generation: 1)) == [.stopTimer, .apply(reason: "SIGHUP")])
        #expect(m.underway == nil)
    }

    @Test func requestsDuringAReadAreServedOnceWhenItEnds() {
        var m = machine()
        _ = m.handle(.requested(reason: "SIGHUP"))
        // A burst of edits meanwhile: no read beside the one under way, nothing logged.
        #expect(m.handle(.requested(reason: "a changed")) == [])
        #expect(m.handle(.requested(reason: "b changed")) == [])
        #expect(m.requestedMeanwhile == "b changed")
        // The first read is applied, then ONE more read for the latest request.
        #expect(m.handle(.readFinished(generation: 1)) == [
            .stopTimer, .apply(reason: "SIGHUP"),
            .armTimer(after: .seconds(10), generation: 2), .startRead(generation: 2),
        ])
        #expect(m.requestedMeanwhile == nil)
        #expect(m.handle(.readFinished(generation: 2)) == [.stopTimer, .apply(reason: "b changed")])
        #expect(m.underway == nil)
    }

    @Test func aReadPastTheTimeoutIsAbandonedAndNeverApplied() {
        var m = machine()
        _ = m.handle(.requested(reason: "/etc/refreshd/Jobs changed"))
        #expect(m.handle(.timerFired(generation: 1, jobsInForce: 3)) == [
            .logError("reload abandoned (/etc/refreshd/Jobs changed): reading /etc/refreshd/Jobs took longer than 10s; keeping the running config of 3 jobs"),
        ])
        // A second firing (or a stale timer) says nothing more.
        #expect(m.handle(.timerFired(generation: 1, jobsInForce: 3)) == [])
        // The late result ends the read but is not applied.
        #expect(m.handle(.readFinished(generation: 1)) == [.stopTimer])
        #expect(m.underway == nil)
        // The next request reads again, under a new generation.
        #expect(m.handle(.requested(reason: "SIGHUP")) == [.armTimer(after: .seconds(10), generation: 2), .startRead(generation: 2)])
    }

    @Test func aRequestWhileAnAbandonedReadRunsIsPostponedThenServed() {
        var m = machine()
        _ = m.handle(.requested(reason: "SIGHUP"))
        _ = m.handle(.timerFired(generation: 1, jobsInForce: 1))
        #expect(m.handle(.requested(reason: "again")) == [
            .logError("reload postponed (again): an abandoned read of /etc/refreshd/Jobs is still running; trying again when it ends"),
        ])
        // When the stuck read finally ends: not applied, and the postponed request reads anew.
        #expect(m.handle(.readFinished(generation: 1)) == [
            .stopTimer, .armTimer(after: .seconds(10), generation: 2), .startRead(generation: 2),
        ])
        #expect(m.handle(.readFinished(generation: 2)) == [.stopTimer, .apply(reason: "again")])
    }

    @Test func staleEventsOfAnotherGenerationDoNothing() {
        var m = machine()
        _ = m.handle(.requested(reason: "SIGHUP"))
        #expect(m.handle(.readFinished(generation: 7)) == [])
        #expect(m.handle(.timerFired(generation: 0, jobsInForce: 1)) == [])
        #expect(m.underway?.abandoned == false)
        let before = m
        #expect(m.handle(.readFinished(generation: 0)) == [])
        #expect(m == before)
    }

    @Test func theLogLineCountsOneJobInTheSingular() {
        var m = ReloadMachine(directory: "J", timeout: .milliseconds(300))
        _ = m.handle(.requested(reason: "r"))
        #expect(m.handle(.timerFired(generation: 1, jobsInForce: 1)) == [
            .logError("reload abandoned (r): reading J took longer than 300ms; keeping the running config of 1 job"),
        ])
    }
}
