import Foundation
import Hummingbird
import RefreshdCore
import RefreshdDashboard
import RefreshdSimulation

/// The Simulate page's replay (issue 34): `GET /simulate/replay` (the form, and with `from` the
/// comparison and its picture) and `GET /api/replay` (the same as JSON). A replay alone reads
/// only refreshd's own state and jobs folder, so it is read-only like the other pages; a
/// what-if names a folder on the server (`jobs=`), so it needs the bearer token, like an action.
extension Routes {

    func registerReplay(_ router: Router<BasicRequestContext>) {
        router.get("/simulate/replay") { request, _ in try await replayPage(request) }
        router.get("/api/replay") { request, _ -> Response in
            if let refusal = whatIfRefusal(request) { return refusal }
            let query = try replayQuery(request)
            guard let settings = query.settings else {
                throw WebError.badRequest("/api/replay needs ?from= (an ISO 8601 date with an offset, or a span back from now like 1d); "
                    + "optional to= (default now), jobs= (a what-if folder, with the bearer token) and seed=")
            }
            return try Self.json(try await facts.replay(settings), status: .ok)
        }
    }

    /// The token's refusal of a request that names a what-if folder (nil: none named, or authorized).
    func whatIfRefusal(_ request: Request) -> Response? {
        guard let jobs = request.uri.queryParameters.get("jobs"), !jobs.isEmpty else { return nil }
        return authorize(request)
    }

    /// The page: the form, and the comparison or why there is none (with its status).
    func replayPage(_ request: Request) async throws -> Response {
        var query = ReplayQuery()
        let parameters = request.uri.queryParameters
        query.from = parameters.get("from") ?? ""
        query.to = parameters.get("to") ?? ""
        query.jobs = parameters.get("jobs") ?? ""
        query.seed = parameters.get("seed") ?? ""
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        func answer(_ status: HTTPResponse.Status, _ data: ReplayData?, problem: String?) -> Response {
            let html = Pages.$onNode.withValue(source.parts.node != nil) {
                Pages.replay(data, query: query, now: now, actionsEnabled: token != nil, problem: problem)
            }
            return Self.response(status, "text/html; charset=utf-8", html.text)
        }
        if let refusal = whatIfRefusal(request) {
            let words = token == nil
                ? "Not replayed: a what-if reads a folder on the server, which needs the bearer token, and actions are off (refreshd runs without --http-token-file)."
                : "Not replayed: a what-if reads a folder on the server, which needs the bearer token; the page's script sends it (JavaScript is off, or the token was refused). Leave the folder empty to replay alone."
            return answer(refusal.status, nil, problem: words)
        }
        do {
            query = try replayQuery(request)
            guard let settings = query.settings else { return answer(.ok, nil, problem: nil) }
            return answer(.ok, try await facts.replay(settings), problem: nil)
        } catch let error as WebError {
            let status: HTTPResponse.Status = switch error {
            case .badRequest: .badRequest
            case .notFound: .notFound
            case .unavailable: .serviceUnavailable
            }
            return answer(status, nil, problem: error.description)
        }
    }

    /// `?from=&to=&jobs=&seed=` read and checked; the what-if folder resolved (`WhatIfFolder`).
    func replayQuery(_ request: Request) throws -> ReplayQuery {
        let parameters = request.uri.queryParameters
        var query = ReplayQuery(from: parameters.get("from") ?? "", to: parameters.get("to") ?? "",
                                jobs: parameters.get("jobs") ?? "", seed: parameters.get("seed") ?? "")
        guard !query.from.isEmpty else { return query }
        guard source.parts.node == nil else {
            throw WebError.badRequest("the replay reads one machine's state file; a node's history is in the shared database, "
                + "which the replay does not read (nor does `refreshd simulate --replay`)")
        }
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        let sides = "an ISO 8601 date with an offset like 2026-11-23T00:00:00Z, or a span back from now like 1d or 90min"
        guard query.from.utf8.count <= 64, let from = Replay.instant(query.from, now: now) else {
            throw WebError.badRequest("from: expected \(sides), found \(EchoText.quoted(query.from, limit: 64))")
        }
        guard query.to.utf8.count <= 64, let to = Replay.instant(query.to, now: now) else {
            throw WebError.badRequest("to: expected \(sides) (empty: now), found \(EchoText.quoted(query.to, limit: 64))")
        }
        var seed: UInt64?
        if !query.seed.isEmpty {
            guard let value = UInt64(query.seed) else { throw WebError.badRequest("seed: expected a whole number from 0 to 18446744073709551615") }
            seed = value
        }
        let folder = source.parts.jobsDirectory
        var whatIf: String?
        if !query.jobs.isEmpty {
            let resolved = try WhatIfFolder.resolve(query.jobs, jobsFolder: folder)
            // The folder that ran is replayed already: no what-if column (as the command line).
            if resolved != WhatIfFolder.realPath(folder) { whatIf = resolved }
        }
        query.settings = ReplayRunner.Settings(from: from, to: to, whatIf: whatIf, seed: seed)
        return query
    }

}
