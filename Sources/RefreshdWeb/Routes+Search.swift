import Foundation
import Hummingbird
import RefreshdCore
import RefreshdDashboard
import RefreshdRuntime

// The search parameters of a request (`?q=`, `?state=`, the cursors, the times), and the
// searches it asks of the stores: `RefreshdDashboard/Search.swift` has the results' shapes.
extension Routes {
    /// `?q=` and `?state=`; `keys`: the text must be part of an instance key.
    static func searchQuery(_ request: Request, keys: Bool) throws -> SearchQuery {
        let query = request.uri.queryParameters
        let q = query.get("q") ?? ""
        if keys, let problem = InstanceSearch.textProblem(q) { throw WebError.badRequest("?q=: \(problem)") }
        guard q.utf8.count <= 512 else { throw WebError.badRequest("?q= takes at most 512 bytes") }
        var state: SearchState?
        if let text = query.get("state"), !text.isEmpty {
            guard let known = SearchState(rawValue: text) else {
                throw WebError.badRequest("?state= takes \(SearchState.allCases.map(\.rawValue).joined(separator: ", ")) (or nothing: any)")
            }
            state = known
        }
        return SearchQuery(q: q, state: state)
    }

    /// `?after=` or `?{beforeName}=` (not both), each 1 to 512 bytes, as `make` reads it.
    static func cursor<P>(_ request: Request, beforeName: String = "before",
                          _ make: (String) -> P?) throws -> SearchCursor<P>? {
        let query = request.uri.queryParameters
        let after = query.get("after"), before = query.get(beforeName)
        guard after == nil || before == nil else { throw WebError.badRequest("?after= and ?\(beforeName)= go one at a time") }
        guard let text = after ?? before else { return nil }
        guard !text.isEmpty, text.utf8.count <= 512, let position = make(text) else {
            throw WebError.badRequest("?\(after != nil ? "after" : beforeName)= takes the cursor of a page's first or last result, as `page` gives it")
        }
        return after != nil ? .after(position) : .before(position)
    }

    /// `/api/jobs/TEMPLATE/instances?q=&state=&after=|beforeKey=`: the search alone.
    func instances(_ id: String, _ request: Request) async throws -> InstancesData {
        let query = try Self.searchQuery(request, keys: true)
        let cursor: SearchCursor<String>? = try Self.cursor(request, beforeName: "beforeKey") { InstanceName.isValidKey($0) ? $0 : nil }
        return try await facts.instances(id, query, cursor: cursor)
    }

    /// `/runs` and `/api/runs`: `?job=ID&outcome=NAME&since=ISO&until=ISO&after=|before=CURSOR`.
    func runs(_ request: Request) async throws -> RunsData {
        let query = request.uri.queryParameters
        let job = query.get("job").flatMap { $0.isEmpty ? nil : $0 }
        if let job, job.utf8.count > 512 { throw WebError.badRequest("?job= takes a job's identifier (1 to 512 bytes)") }
        let outcome = query.get("outcome").flatMap { $0.isEmpty ? nil : $0 }
        var ending: RunSearch.Ending?
        if let outcome {
            guard let named = RunSearch.ending(named: outcome) else {
                throw WebError.badRequest("?outcome= takes \(RunSearch.endingNames.joined(separator: ", ")) (failed: every outcome but success)")
            }
            ending = named
        }
        let since = try Self.instant(request, "since"), until = try Self.instant(request, "until")
        let cursor = try Self.cursor(request) { RunPosition(text: $0) }
        return try await facts.runs(RunSearch(identifier: job, ending: ending, since: since, until: until), outcome: outcome, cursor: cursor)
    }

    /// `?NAME=` as an instant: ISO 8601 with an offset, or without one (a browser's
    /// `datetime-local`: `2026-12-05T07:30`) taken as UTC.
    static func instant(_ request: Request, _ name: String) throws -> Instant? {
        guard let text = request.uri.queryParameters.get(name), !text.isEmpty else { return nil }
        guard text.utf8.count <= 64, let instant = ISO8601.parse(text) ?? ISO8601.parse(text + "Z") ?? ISO8601.parse(text + ":00Z") else {
            throw WebError.badRequest("?\(name)= takes an ISO 8601 time, like 2026-12-05T07:30:00Z (UTC when it has no offset)")
        }
        return instant
    }
}
