import Foundation
import Testing
import RefreshdCore
@testable import RefreshdCalendar

/// Compares generated expressions against the real `systemd-analyze calendar` (systemd 252):
/// validity, normalized form and five successive elapses, in several zones, from base times
/// spread over 2025-2027 and clustered just before and inside DST transitions.
@Suite struct SystemdComparisonTests {
    static let zones = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Tokyo",
                        "America/Santiago", "UTC"]
    static let batches = 120
    static let perBatch = 10
    static let iterations = 5

    /// Base instants: half within 36 hours before a DST transition (or just after one, inside
    /// a fall-back overlap), half anywhere from 2025 to 2027.
    static func base(for zone: TimeZone, using random: inout SplitMix64) -> Date {
        let start = Date(timeIntervalSince1970: 1_735_689_600) // 2025-01-01
        let anywhere = start.addingTimeInterval(Double(random.int(0...(3 * 365 * 86_400))))
        guard random.chance(0.6), let transition = zone.nextDaylightSavingTimeTransition(after: anywhere) else {
            return anywhere
        }
        if random.chance(0.25) { return transition.addingTimeInterval(Double(random.int(0...3600))) }
        return transition.addingTimeInterval(-Double(random.int(0...(36 * 3600))))
    }

    @Test func generatedExpressionsMatchSystemdAnalyze() throws {
        guard SystemdAnalyzeRunner.isAvailable else {
            Issue.record("systemd-analyze not found at \(SystemdAnalyzeRunner.path); install systemd to run this comparison")
            return
        }
        let seed = ProcessInfo.processInfo.environment["CALENDAR_COMPARISON_SEED"].flatMap { UInt64($0) } ?? 0x5EED_CA1E
        var random = SplitMix64(seed: seed)
        var generator = SystemdExpressionGenerator(random: SplitMix64(seed: seed ^ 0xCA1E_DA25))
        var compared = 0, instants = 0, invalid = 0, gaveUp = 0, backwards = 0
        for batch in 0..<Self.batches {
            let zoneName = Self.zones[batch % Self.zones.count]
            let zone = try #require(TimeZone(identifier: zoneName))
            let base = Self.base(for: zone, using: &random)
            let expressions = Array(Set((0..<Self.perBatch).map { _ in generator.expression() })).sorted()
            let reference = try SystemdAnalyzeRunner.run(expressions, zone: zoneName, base: base,
                                                         iterations: Self.iterations)
            for expression in expressions {
                let context = "\(expression) in \(zoneName) after \(base)"
                let expected = try #require(reference[expression], "no systemd output for \(context)")
                let schedule = try? CalendarSchedule(parsing: expression)
                compared += 1
                guard let schedule else {
                    #expect(expected.failed, "we reject what systemd accepts: \(context)")
                    invalid += 1
                    continue
                }
                guard !expected.failed else {
                    Issue.record("we accept what systemd rejects: \(context) → \(schedule.normalized)")
                    continue
                }
                let ours = schedule.elapses(after: base, in: zone, count: Self.iterations)
                    .map { $0.timeIntervalSince1970.rounded(.down) }
                if expected.gaveUp {
                    // systemd hit its step limit ("Infinite loop in calendar calculation"); we
                    // answer with the quirk-free walk instead (see NextElapseSearch), not compared.
                    gaveUp += 1
                    continue
                }
                #expect(schedule.normalized == expected.normalized, "normalized form of \(context)")
                // systemd can step backwards inside a fall-back overlap (an elapse before its base);
                // we skip those, so compare with the instants that move forward.
                var forward: [Double] = []
                for instant in expected.instants.map(\.timeIntervalSince1970)
                where instant > (forward.last ?? base.timeIntervalSince1970.rounded(.down)) {
                    forward.append(instant)
                }
                if forward.count < expected.instants.count {
                    backwards += 1
                    #expect(Array(ours.prefix(forward.count)) == forward, "forward elapses of \(context)")
                } else {
                    #expect(ours == forward, "elapses of \(context)")
                }
                instants += forward.count
            }
        }
        print("systemd comparison: \(compared) expressions (\(invalid) invalid in both, \(gaveUp) systemd gave up on, \(backwards) where systemd went backwards), \(instants) instants")
        #expect(compared >= Self.batches * Self.perBatch / 2)
    }
}
