import Testing
@testable import RefreshdCore

/// No duration or instant, however large, traps the core: instant arithmetic saturates within
/// years 1...9999, and a definition with absurd allowances, delays or windows still runs.
@Suite struct SchedulerCoreExtremeValueTests {
    static let durations: [Duration] = [
        .zero, .milliseconds(1), .seconds(1), .seconds(3600), .seconds(100 * 365 * 86_400),
        .milliseconds(Int64.max), .milliseconds(Int64.max - 1), .seconds(Int64.max),
        .seconds(106_751_991_167 * 86_400), .seconds(153_722_867_280_912 * 60),
    ]

    /// Every hour on the hour, ending at the last representable instant, like a real calendar.
    static let hourly = Schedule("hourly") { t in
        let hour: Int64 = 3_600_000
        let next = (t.milliseconds / hour + 1) * hour
        return next <= Instant.latest.milliseconds ? Instant(milliseconds: next) : nil
    }

    @Test func instantArithmeticSaturates() {
        let now = Instant(milliseconds: 1_800_000_000_000)
        #expect(now + .milliseconds(Int64.max) == .latest)
        #expect(now - .milliseconds(Int64.max) == .earliest)
        #expect(now + .seconds(Int64.max) == .latest)
        #expect(Instant.latest + .milliseconds(1) == .latest)
        #expect(Instant(milliseconds: Int64.max).duration(since: Instant(milliseconds: Int64.min))
                == .milliseconds(Int64.max))
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == Int64.max)
        #expect(Instant.latest.iso8601 == "9999-12-31T23:59:59.999Z")
        #expect(Instant.earliest.iso8601 == "0001-01-01T00:00:00.000Z")
    }

    /// Whole milliseconds by one 128-bit division agree with seconds and attoseconds taken
    /// apart: toward zero for negatives and sub-millisecond parts, saturating at Int64's bounds.
    @Test func wholeMillisecondsTruncatesTowardZeroAndSaturates() {
        func reference(_ d: Duration) -> Int64 {
            let (seconds, attoseconds) = d.components
            let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
            if overflow { return seconds > 0 ? Int64.max : Int64.min }
            let (total, overflow2) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
            if overflow2 { return ms > 0 ? Int64.max : Int64.min }
            return total
        }
        #expect(Duration.milliseconds(-1500).wholeMilliseconds == -1500)
        #expect(Duration.nanoseconds(-999_999).wholeMilliseconds == 0)
        #expect(Duration.nanoseconds(1_999_999).wholeMilliseconds == 1)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == Int64.min)
        #expect(Duration.milliseconds(Int64.min).wholeMilliseconds == Int64.min)
        var random = SplitMix64(seed: 2026)
        for d in Self.durations + Self.durations.map({ .zero - $0 }) {
            #expect(d.wholeMilliseconds == reference(d), "\(d)")
        }
        for _ in 0..<2_000 {
            let seconds = Int64(bitPattern: random.next()) >> Int64(random.next() % 64)
            let attoseconds = Int64(bitPattern: random.next()) % 1_000_000_000_000_000_000
            let d = Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
            #expect(d.wholeMilliseconds == reference(d), "\(d)")
        }
    }

    @Test(arguments: 0..<40)
    func randomExtremeDefinitionsRunWithoutTrapping(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 17)
        var definitions: [TaskDefinition] = []
        for i in 0..<3 {
            let resubmit: ResubmitPolicy = switch random.int(0...2) {
            case 0: .none
            case 1: .after(random.pick(Self.durations))
            default: .calendar(Self.hourly)
            }
            let retry = random.chance(0.7)
                ? RetryPolicy(backoff: random.pick(RetryPolicy.Backoff.allCases), initial: random.pick(Self.durations),
                              maximum: random.pick(Self.durations), limit: random.int(0...8))
                : nil
            definitions.append(TaskDefinition(
                identifier: "x.job\(i)", kind: .processing, namespace: "n\(i)",
                allowance: random.pick(Self.durations), grace: random.pick(Self.durations),
                resubmit: resubmit, retry: retry, missed: random.pick(MissedPolicy.allCases),
                catchUp: random.pick(Self.durations), jitter: random.pick(Self.durations),
                fixedJitter: random.chance(0.3), accuracy: random.pick(Self.durations)))
        }
        var driver = VirtualDriver(definitions)
        for d in definitions {
            let earliest: Instant = random.pick([driver.now, .latest, .earliest, driver.now - .seconds(7200),
                                                 driver.now + random.pick(Self.durations)])
            try? driver.core.submit(TaskRequest(identifier: d.identifier, kind: .processing,
                                                earliestBeginDate: earliest), at: driver.now, into: &driver.log)
            driver.record([])
        }
        driver.record(driver.core.handle(.timerFired, at: driver.now))
        for step in 0..<60 {
            switch random.int(0...5) {
            case 0:
                let jump = random.pick(Self.durations)
                let expected = driver.now
                driver.now = random.chance(0.5) ? driver.now + jump : driver.now - jump
                driver.send(.clockChanged(expected: expected))
            case 1:
                if let run = driver.core.activeRuns.first {
                    driver.finish(run.runID, random.pick([.exited(0), .exited(1), .signaled(9), .abandoned,
                                                          .completed(success: false)]))
                }
            default:
                driver.fireNext()
            }
            if let armed = driver.armed {
                #expect(armed >= .earliest && armed <= .latest, "step \(step)")
            }
            for order in driver.launched {
                #expect(order.deadline >= order.started, "a huge allowance must not wrap into the past")
                _ = order.deadline.iso8601
            }
        }
        driver.send(.shutdown)
        for _ in 0..<10 where !driver.stopped {
            if let run = driver.core.activeRuns.first { driver.finish(run.runID, .signaled(9)) } else { driver.fireNext() }
        }
        #expect(driver.stopped)
    }
}
