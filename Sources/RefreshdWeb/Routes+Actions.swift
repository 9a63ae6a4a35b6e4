import Foundation
import Hummingbird
import NIOCore
import RefreshdDashboard
import RefreshdRuntime

/// The dashboard's actions (`POST`): each a control request carried out for a request that
/// holds the bearer token, and the token's check itself. Out of `Routes.swift`, whose other
/// parts read facts.
extension Routes {
    /// Carries out an action for a request that holds the token: 401 without a bearer token,
    /// 403 with another one or when actions are off; otherwise the control reply as JSON,
    /// with a status from its error code.
    ///
    /// A form a browser sends without JavaScript (form-encoded, asking for HTML, and so without
    /// the bearer header, which only the page's script adds) is refused too, but answered 303
    /// back to `back` (the page of the button) with the refusal's code, which that page tells
    /// in words.
    func action(_ request: Request, back: String, _ make: () throws -> ControlRequest) async throws -> Response {
        if let refusal = refused(request, back: back) { return refusal }
        let reply = try await source.command(try make())
        let status: HTTPResponse.Status = switch reply.error?.code {
        case nil: .ok
        case "bad-request", "bad-key", "bad-values": .badRequest
        case "not-declared", "unknown-kind", "not-found", "unknown-activity", "not-running", "unknown-template",
             "unknown-instance": .notFound
        case "not-saved", "unavailable", "stopping": .serviceUnavailable
        default: .conflict
        }
        return try Self.json(reply, status: status)
    }

    /// The Failures page's bulk retry: `?list=retrying`, `?list=exhausted` or `?list=all` (the
    /// page's lists as they are now, what its buttons send), or `?id=A&id=B...` (1 to
    /// `Views.maxFailureRows` * 2); each the control server's own `submit` of that job or
    /// instance now (what a row's Retry now sends), one after another. The reply says how many
    /// were submitted and which were refused: 409 with the first refusal's code when any was.
    func retryNow(_ request: Request) async throws -> Response {
        if let refusal = refused(request, back: "/failures") { return refusal }
        var ids: [String] = request.uri.queryParameters.getAll("id").map { String($0) }
        if let list = request.uri.queryParameters.get("list") {
            guard ids.isEmpty, ["retrying", "exhausted", "all"].contains(list) else {
                throw WebError.badRequest("?list= takes retrying, exhausted or all, and no ?id= beside it")
            }
            let now = try await facts.failures()
            ids = (list == "exhausted" ? [] : now.retrying.map(\.identifier)) + (list == "retrying" ? [] : now.exhausted.map(\.identifier))
            guard !ids.isEmpty else {
                var reply = ControlReply(id: nil)
                reply.message = "nothing to retry: no job or instance is \(list == "all" ? "failing" : list) now"
                return try Self.json(reply, status: .ok)
            }
        }
        guard !ids.isEmpty, ids.count <= Views.maxFailureRows * 2, ids.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 512 }) else {
            throw WebError.badRequest("retrying needs ?list=retrying|exhausted|all, or ?id=JOB repeated 1 to \(Views.maxFailureRows * 2) times, each 1 to 512 bytes")
        }
        var submitted = 0
        var refusals: [(id: String, failure: ControlFailure)] = []
        for id in ids {
            let reply = try await source.command(ControlRequest(.submit, identifier: id))
            if let error = reply.error { refusals.append((id, error)) } else { submitted += 1 }
        }
        let done = "submitted \(submitted) of \(ids.count) now"
        guard let first = refusals.first else {
            var reply = ControlReply(id: nil)
            reply.message = done
            return try Self.json(reply, status: .ok)
        }
        let listed = refusals.prefix(5).map { "\($0.id): \($0.failure.message)" }.joined(separator: "; ")
        let message = done + "; refused \(refusals.count): " + listed + (refusals.count > 5 ? "; ..." : "")
        return try Self.json(ControlReply.failure(id: nil, ControlFailure(code: first.failure.code, message: message)), status: .conflict)
    }

    /// The refusal of an action without the token (nil: authorized): the API's 401 or 403, or
    /// for a plain form of a page without JavaScript, 303 back to `back` with the refusal's code.
    func refused(_ request: Request, back: String) -> Response? {
        guard let refusal = authorize(request) else { return nil }
        guard request.headers[.authorization] == nil,
              request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
              request.headers[.accept]?.contains("text/html") == true
        else { return refusal }
        let code = token == nil ? "actions-off" : "no-token"
        return Response(status: .seeOther, headers: [.location: back + "?refused=" + code])
    }

    func authorize(_ request: Request) -> Response? {
        func refuse(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
            var response = (try? Self.json(ControlReply.failure(id: nil, ControlFailure(code: code, message: message)), status: status))
                ?? Response(status: status)
            if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer realm=\"refreshd\"" }
            return response
        }
        guard let token else {
            return refuse(.forbidden, "actions-off", "actions are off: refreshd runs without --http-token-file, so the dashboard is read-only")
        }
        guard let header = request.headers[.authorization] else {
            return refuse(.unauthorized, "no-token", "actions need Authorization: Bearer TOKEN (the token in refreshd's --http-token-file)")
        }
        let given = header.hasPrefix("Bearer ") ? Array(header.utf8.dropFirst(7)) : []
        guard Self.constantTimeEqual(given, Array(token.utf8)) else {
            return refuse(.forbidden, "bad-token", "the bearer token does not match refreshd's --http-token-file")
        }
        return nil
    }

    /// Compares without stopping at the first difference, so the time taken tells nothing of
    /// how much of a guess was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
