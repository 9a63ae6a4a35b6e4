import Testing
import RefreshdCore
@testable import RefreshdRuntime

/// Seeding and reload are pure planning functions: tested on their own, used by both hosts.
@Suite struct PlanTests {
    let now = Instant(milliseconds: 1_800_000_000_000)

    func job(_ id: String, first: FirstRequest = .core, allowance: Duration = .seconds(30)) -> JobSpec {
        JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: allowance),
                command: CommandJob(argv: ["/bin/true"]), firstRequest: first)
    }

    @Test func aPendingRequestIsKeptUnlessReplacing() {
        let j = job("a.job", first: .after(.seconds(60)))
        #expect(SeedPlan.plan(j, hasPending: true, seededFrom: nil, replacing: false, now: now) == .keep)
        #expect(SeedPlan.plan(j, hasPending: true, seededFrom: nil, replacing: true, now: now)
                == .submit(earliest: now + .seconds(60)))
        #expect(SeedPlan.plan(j, hasPending: false, seededFrom: "+1m", replacing: false, now: now)
                == .submit(earliest: now + .seconds(60)))
    }

    @Test func aFixedDateIsRequestedOnce() {
        let date = Instant(milliseconds: 1_900_000_000_000)
        let j = job("a.job", first: .at(date))
        #expect(SeedPlan.plan(j, hasPending: false, seededFrom: nil, replacing: false, now: now) == .submit(earliest: date))
        #expect(SeedPlan.plan(j, hasPending: false, seededFrom: date.iso8601, replacing: false, now: now) == .keep)
        #expect(SeedPlan.plan(j, hasPending: false, seededFrom: "2020-01-01T00:00:00.000Z", replacing: false, now: now)
                == .submit(earliest: date))
    }

    @Test func theCoreDecidesWithoutAnEarliest() {
        #expect(SeedPlan.plan(job("a.job"), hasPending: false, seededFrom: nil, replacing: false, now: now) == .submitFirst)
        let never = Schedule("never") { _ in nil }
        #expect(SeedPlan.plan(job("a.job", first: .nextSlot(never)), hasPending: false, seededFrom: nil,
                              replacing: false, now: now) == .none)
    }

    @Test func reloadDiffsByIdentifier() {
        let current = ["a.job": job("a.job"), "b.job": job("b.job"), "c.job": job("c.job")]
        let loaded = [job("a.job"), job("b.job", allowance: .seconds(5)), job("d.job"), job("d.job", allowance: .seconds(1))]
        let plan = ReloadPlan.diff(current: current, loaded: loaded)
        #expect(plan.removed == ["c.job"])
        #expect(plan.added.map(\.identifier) == ["d.job"])
        #expect(plan.changed.map(\.identifier) == ["b.job"])
        #expect(plan.unchanged == 1)
        #expect(plan.summary == "1 added, 1 changed, 1 removed, 1 unchanged")
    }

    @Test func firstRequestTextMatchesTheJobFiles() {
        #expect(FirstRequest.core.text == "+0s")
        #expect(FirstRequest.after(.seconds(5400)).text == "+1h30m")
        #expect(FirstRequest.after(.milliseconds(2500)).text == "+2s500ms")
        #expect(FirstRequest.at(now).text == now.iso8601)
    }

    @Test func iso8601RoundTrips() {
        for ms in [Int64(0), 1_800_000_000_123, -86_400_000, Instant.latest.milliseconds] {
            let instant = Instant(milliseconds: ms)
            #expect(ISO8601.parse(instant.iso8601) == instant)
        }
        #expect(ISO8601.parse("2026-11-22T04:00:00Z") == ISO8601.parse("2026-11-22T04:00:00.000Z"))
        #expect(ISO8601.parse("2026-02-30T04:00:00Z") == nil)
        #expect(ISO8601.parse("2026-11-22 04:00:00Z") == nil)
    }
}
