import Foundation
import RefreshdCore
import RefreshdRuntime

/// The checks after every step of a simulation: the engine's invariants, the side machines'
/// (`checkSideMachines`), the end-to-end ones the journal audits, and nothing committed lost
/// across a kill -9.
extension Simulation {
    /// The engine's invariants plus the end-to-end ones the journal audits.
    func check() {
        guard violations.isEmpty else { return }
        if let runtime = host.runtime, !host.stopped {
            // What the step changed, checked after every step; a finding is reported as the
            // full check words it (the same message and order as before).
            let found = runtime.checkInvariantsIncrementally()
            for v in found.isEmpty ? [] : (runtime.checkInvariants().first.map { [$0] } ?? found) {
                violations.append(.init(time: host.clock, invariant: v.invariant.rawValue, message: v.description,
                                        recent: journal.recent()))
                return
            }
            if let (invariant, message) = checkSideMachines(runtime) {
                violations.append(.init(time: host.clock, invariant: invariant, message: message, recent: journal.recent()))
                return
            }
        }
        if let v = journal.takeViolation() {
            violations.append(.init(time: v.time, invariant: v.invariant, message: v.message, recent: journal.recent()))
        }
    }

    /// Nothing committed before a kill -9 is lost: every request pending then is still pending
    /// (no later than it was: a restart never pushes a saved request back), or has run since.
    func verifyNothingLost(_ runtime: RefreshRuntime) {
        guard let before = pendingAtCrash else { return }
        pendingAtCrash = nil
        let ranSince = history.identifiers(after: lastRunIDAtCrash)
        for (id, earliest) in before.sorted(by: { $0.key < $1.key }) where !ranSince.contains(id) {
            guard let now = runtime.pending(id) else {
                violations.append(.init(time: host.clock, invariant: "nothing-lost-across-kill",
                                        message: "the pending request of \(id) (earliest \(earliest)) was committed before the kill -9 and is gone after the restart",
                                        recent: journal.recent()))
                return
            }
            let definition = scenario.jobs.first { $0.spec.identifier == id }?.spec.definition
            let onCalendar = definition?.schedule != nil
            // A calendar job's missed policy may move its request on at a restart (skip: to the
            // next slot; all: into the catch-up window); only `once` keeps it as it was.
            let mayMove = onCalendar && definition?.missed != .once
            if !onCalendar, now.origin != .retry, let crash = crashTime, now.submitted > crash {
                violations.append(.init(time: host.clock, invariant: "nothing-lost-across-kill",
                                        message: "the pending request of \(id) (earliest \(earliest)) was committed before the kill -9; after the restart it was replaced by a new one (earliest \(now.earliest))",
                                        recent: journal.recent()))
                return
            }
            if now.earliest > earliest, !mayMove {
                violations.append(.init(time: host.clock, invariant: "nothing-lost-across-kill",
                                        message: "the pending request of \(id) was due \(earliest) before the kill -9 and is due \(now.earliest) after the restart: the committed request was lost and replaced",
                                        recent: journal.recent()))
                return
            }
        }
    }
}
