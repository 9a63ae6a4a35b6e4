import Foundation
import RefreshdCore
import RefreshdStore

/// A fresh directory under the system temp directory, removed (with everything in it) after
/// `body`, whether it returns or throws.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array((NSTemporaryDirectory() + "refreshd-store-tests-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// A state directory inside a temporary directory (not yet created), and its store opened
/// read-write; closed and removed after `body`.
func withStore<T>(_ body: (StateStore, String) throws -> T) throws -> T {
    try withTemporaryDirectory { temp in
        let directory = temp + "/state"
        let store = try StateStore.open(directory: directory)
        defer { store.close() }
        return try body(store, directory)
    }
}

/// Opens the same file again, as a restarted daemon would.
func reopened<T>(_ directory: String, _ body: (StateStore) throws -> T) throws -> T {
    let store = try StateStore.open(directory: directory)
    defer { store.close() }
    return try body(store)
}

func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

/// 2026-11-21T10:00:00Z plus `offset` milliseconds.
func at(_ offset: Int64 = 0) -> Instant {
    Instant(milliseconds: ISO8601.days(year: 2026, month: 11, day: 21) * 86_400_000 + 36_000_000 + offset)
}

let hour: Int64 = 3_600_000

func pendingRequest(_ identifier: String, earliest: Instant = at(60_000), sequence: UInt64 = 1,
                    kind: TaskKind = .appRefresh, origin: PendingRequest.Origin = .submitted,
                    power: Bool = false, network: Bool = false) -> PendingRequest {
    PendingRequest(identifier: identifier, namespace: "ns." + identifier, kind: kind, earliest: earliest,
                   submitted: at(), sequence: sequence, requiresExternalPower: power,
                   requiresNetworkConnectivity: network, origin: origin)
}

func runRecord(_ runID: Int64, _ identifier: String, started: Instant = at(120_000),
               kind: TaskKind = .appRefresh, attempt: Int = 1) -> RunRecord {
    RunRecord(runID: runID, identifier: identifier, kind: kind, submitted: at(), earliest: at(60_000),
              started: started, deadline: started + .seconds(30), attempt: attempt)
}

func ended(_ run: RunRecord, at instant: Instant, _ outcome: Outcome, exit: Int32? = nil,
           signal: Int32? = nil) -> StateChange {
    .runEnded(runID: run.runID, identifier: run.identifier, ended: instant, outcome: outcome,
              exitStatus: exit, signal: signal)
}
