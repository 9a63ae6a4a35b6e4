import Foundation
import Hummingbird
import NIOCore
import RefreshdCore
import RefreshdDashboard
import RefreshdRuntime

/// The dashboard's URLs: pages, `/api/...` (the same facts as JSON), `/api/events` (SSE),
/// actions (`POST`, bearer token), the rendition images, `/metrics`, `/healthz`, static files.
struct Routes: Sendable {
    let source: DashboardSource
    /// Nil: actions are off (no `--http-token-file`).
    let token: String?
    /// What the pages show.
    var facts: Facts { Facts(source: source, actionsEnabled: token != nil) }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        router.get("/") { request, _ in try await page(request) { Pages.overview(try await facts.overview()) } }
        router.get("/api/overview") { _, _ in try await json { try await facts.overview() } }
        router.get("/jobs") { request, _ in try await page(request) { Pages.jobs(try await jobs(request)) } }
        router.get("/api/jobs") { request, _ in try await json { try await jobs(request) } }
        router.get("/runs") { request, _ in try await page(request) { Pages.runs(try await runs(request)) } }
        router.get("/api/runs") { request, _ in try await json { try await runs(request) } }
        router.get("/jobs/:id") { request, context in
            try await page(request) { Pages.job(try await job(Self.parameter(context, "id"), before: Self.before(request), request: request)) }
        }
        router.get("/api/jobs/:id") { request, context in
            try await json { try await job(Self.parameter(context, "id"), before: Self.before(request), request: request) }
        }
        router.get("/api/jobs/:id/instances") { request, context in
            try await json { try await instances(Self.parameter(context, "id"), request) }
        }
        router.get("/failures") { request, _ in try await page(request) { Pages.failures(try await facts.failures()) } }
        router.get("/api/failures") { _, _ in try await json { try await facts.failures() } }
        router.get("/widgets") { request, _ in try await page(request) { Pages.widgets(try await facts.widgets()) } }
        router.get("/api/widgets") { _, _ in try await json { try await facts.widgets() } }
        router.get("/widgets/:kind/:family/rendition") { _, context in
            try await rendition(kind: Self.parameter(context, "kind"), family: Self.parameter(context, "family"))
        }
        router.get("/activities") { request, _ in try await page(request) { Pages.activities(try await facts.activities()) } }
        router.get("/api/activities") { _, _ in try await json { try await facts.activities() } }
        router.get("/cluster") { request, _ in try await page(request) { Pages.cluster(try await facts.cluster()) } }
        router.get("/api/cluster") { _, _ in try await json { try await facts.cluster() } }
        router.get("/overview.svg") { _, _ in Self.response(.ok, "image/svg+xml", try await facts.picture()) }
        router.get("/simulate") { request, _ in
            try await page(request) { Pages.simulate(try await simulate(request), days: request.uri.queryParameters.get("days")) }
        }
        router.get("/api/simulate") { request, _ -> Response in
            guard let data = try await simulate(request) else {
                throw WebError.badRequest("/api/simulate needs ?days= (1 to \(SimulationRunner.maxDays)); optional start= (ISO 8601) and seed=")
            }
            return try Self.json(data, status: .ok)
        }
        router.get("/simulate.svg") { request, _ -> Response in
            guard let data = try await simulate(request) else { throw WebError.badRequest("?days= is needed") }
            return Self.response(.ok, "image/svg+xml", data.svg)
        }
        router.get("/api/openapi.json") { _, _ in Self.response(.ok, "application/json", OpenAPI.document) }
        router.get("/api/events") { _, _ in events() }
        router.get("/metrics") { _, _ in try await metrics() }
        router.get("/healthz") { _, _ in await health() }
        router.get("/static/dashboard.js") { _, _ in
            Self.response(.ok, "text/javascript; charset=utf-8", Assets.script)
        }
        router.get("/static/favicon.svg") { _, _ in Self.response(.ok, "image/svg+xml", Assets.favicon) }
        router.get("/favicon.ico") { _, _ in Self.response(.ok, "image/svg+xml", Assets.favicon) }
        router.get("/static/dashboard.css") { _, _ in
            Self.response(.ok, "text/css; charset=utf-8", Assets.style)
        }
        router.post("/api/jobs/:id/run") { request, context in
            try await action(request, back: Self.jobPage(context)) { ControlRequest(.submit, identifier: try Self.parameter(context, "id")) }
        }
        router.post("/api/jobs/:id/cancel") { request, context in
            try await action(request, back: Self.jobPage(context)) { ControlRequest(.cancel, identifier: try Self.parameter(context, "id")) }
        }
        router.post("/api/jobs/:id/pause") { request, context in
            try await action(request, back: Self.jobPage(context)) { ControlRequest(.pause, identifier: try Self.parameter(context, "id")) }
        }
        router.post("/api/jobs/:id/resume") { request, context in
            try await action(request, back: Self.jobPage(context)) { ControlRequest(.resume, identifier: try Self.parameter(context, "id")) }
        }
        router.post("/api/jobs/:id/expire") { request, context in
            try await action(request, back: Self.jobPage(context)) { ControlRequest(.simulateExpiration, identifier: try Self.parameter(context, "id")) }
        }
        router.post("/api/jobs/:id/instances") { request, context in
            try await action(request, back: Self.jobPage(context)) {
                var values: [String: String] = [:]
                var key: String?
                for (name, value) in request.uri.queryParameters {
                    guard name.utf8.count <= 128, value.utf8.count <= 512 else { throw WebError.badRequest("a parameter is too long") }
                    if name == "key" { key = String(value) } else { values[String(name)] = String(value) }
                }
                guard let key, !key.isEmpty else {
                    throw WebError.badRequest("adding an instance needs ?key= (\(InstanceName.keyExpectation)); parameters as ?NAME=VALUE")
                }
                var command = ControlRequest(.instanceAdd)
                command.template = try Self.parameter(context, "id")
                command.key = key
                command.values = values.isEmpty ? nil : values
                return command
            }
        }
        router.post("/api/jobs/:id/instances/:key/remove") { request, context in
            try await action(request, back: Self.jobPage(context)) {
                var command = ControlRequest(.instanceRemove)
                command.template = try Self.parameter(context, "id")
                command.key = try Self.parameter(context, "key")
                return command
            }
        }
        router.post("/api/failures/retry") { request, _ in try await retryNow(request) }
        router.post("/api/widgets/:kind/reload") { request, context in
            try await action(request, back: "/widgets") { ControlRequest(.reload, kind: try Self.parameter(context, "kind")) }
        }
        router.post("/api/activities/:id/end") { request, context in
            try await action(request, back: "/activities") {
                let line = ["activity": "end", "id": try Self.parameter(context, "id")]
                let text = String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self)
                return ControlRequest(.activity, activity: text)
            }
        }
        registerReplay(router)
        return router
    }

    /// `/jobs`: `?q=`, `?state=` and a cursor read from the request.
    func jobs(_ request: Request) async throws -> JobsData {
        try await facts.jobs(try Self.searchQuery(request, keys: false), cursor: try Self.cursor(request) { $0 })
    }

    /// `/jobs/ID`: a template's page reads its instances' search from the request.
    func job(_ id: String, before: Int64?, request: Request) async throws -> JobData {
        try await facts.job(id, before: before) {
            (try Self.searchQuery(request, keys: true),
             try Self.cursor(request, beforeName: "beforeKey") { InstanceName.isValidKey($0) ? $0 : nil })
        }
    }

    /// `?days=N[&start=ISO][&seed=S]`: the jobs folder simulated (nil without `days`).
    func simulate(_ request: Request) async throws -> SimulateData? {
        let query = request.uri.queryParameters
        guard let daysText = query.get("days"), !daysText.isEmpty else { return nil }
        guard let days = Int(daysText) else {
            throw WebError.badRequest("days must be a whole number from 1 to \(SimulationRunner.maxDays)")
        }
        var start: Instant?
        if let text = query.get("start"), !text.isEmpty {
            guard let instant = ISO8601.parse(text) else {
                throw WebError.badRequest("start: expected an ISO 8601 date with an offset, like 2026-11-23T00:00:00Z")
            }
            start = instant
        }
        var seed: UInt64?
        if let text = query.get("seed"), !text.isEmpty {
            guard let value = UInt64(text) else { throw WebError.badRequest("seed: expected a whole number from 0 to 18446744073709551615") }
            seed = value
        }
        return try await facts.simulate(SimulationRunner.Settings(days: days, start: start, seed: seed))
    }

    func rendition(kind: String, family: String) async throws -> Response {
        let live = try await source.live()
        guard let widget = live.timelines.widgets.first(where: { $0.kind == kind && $0.family.rawValue == family }) else {
            throw WebError.notFound("no widget \(kind) / \(family)")
        }
        guard let path = Views.rendition(of: widget.shown), let container = source.sharedContainer else {
            throw WebError.notFound("the entry \(kind) / \(family) shows names no image")
        }
        let file = try await Task.detached { try RenditionFile.read(path, in: container) }.value
        var response = Response(status: .ok, headers: [.contentType: file.type], body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        response.headers[.cacheControl] = "no-store"
        return response
    }

    func metrics() async throws -> Response {
        let reply = try await source.command(ControlRequest(.metrics))
        return Self.response(.ok, "text/plain; version=0.0.4; charset=utf-8", reply.metrics ?? "")
    }

    func health() async -> Response {
        do {
            let live = try await source.live()
            let ok = !live.snapshot.isStopping
            let body = "{\"ok\":\(ok),\"now\":\"\(live.now.iso8601)\",\"pending\":\(live.pendingCount),\"running\":\(live.snapshot.runs.count)}\n"
            return Self.response(ok ? .ok : .serviceUnavailable, "application/json", body)
        } catch {
            return Self.response(.serviceUnavailable, "application/json", "{\"ok\":false}\n")
        }
    }

    /// Server-sent events: one `observation` event per runtime observation, a comment every
    /// 15 s (a page that went away is noticed then). At most `EventFeed.maxStreams` at once.
    func events() -> Response {
        guard let (id, stream) = source.feed.subscribe() else {
            return Self.response(.serviceUnavailable, "text/plain; charset=utf-8", "too many live pages are open (at most \(EventFeed.maxStreams)); reload later\n")
        }
        let feed = source.feed
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                defer { feed.unsubscribe(id) }
                try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
                for await item in stream {
                    if let observation = item, let data = try? encoder.encode(observation) {
                        var frame = ByteBuffer(string: "event: observation\ndata: ")
                        frame.writeBytes(data)
                        frame.writeString("\n\n")
                        try await writer.write(frame)
                    } else {
                        try await writer.write(ByteBuffer(string: ": ping\n\n"))
                    }
                }
                try await writer.finish(nil)
            })
    }

    // MARK: Helpers

    static func parameter(_ context: BasicRequestContext, _ name: String) throws -> String {
        guard let raw = context.parameters.get(name) else { throw WebError.badRequest("the URL has no \(name)") }
        guard let text = raw.removingPercentEncoding, !text.isEmpty, text.utf8.count <= 512 else {
            throw WebError.badRequest("the \(name) in the URL is not valid percent-encoded text of 1 to 512 bytes")
        }
        return text
    }

    static func before(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters.get("before") else { return nil }
        guard let value = Int64(text), value >= 1 else { throw WebError.badRequest("?before= takes a run id (a whole number from 1)") }
        return value
    }

    /// A page; `?refused=CODE` (a plain form's refused action, see `action`) puts the
    /// refusal's words where the script puts action results.
    func page(_ request: Request, _ make: () async throws -> HTML) async throws -> Response {
        var text = try await Pages.$onNode.withValue(source.parts.node != nil) { try await make().text }
        if let code = request.uri.queryParameters.get("refused"), let notice = Pages.refusal(code, page: request.uri.path) {
            text = text.replacingOccurrences(of: Pages.messagesMarker.text, with: notice.text)
        }
        return Self.response(.ok, "text/html; charset=utf-8", text)
    }

    /// `/jobs/ID` of an action's `:id`: where its button is.
    static func jobPage(_ context: BasicRequestContext) -> String {
        "/jobs/" + HTML.segment((try? parameter(context, "id")) ?? "")
    }

    func json<T: Encodable>(_ make: () async throws -> T) async throws -> Response {
        try Self.json(try await make(), status: .ok)
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        var buffer = ByteBuffer(bytes: try encoder.encode(value))
        buffer.writeString("\n")
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }

    static func response(_ status: HTTPResponse.Status, _ type: String, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// Headers on every response, and errors turned into pages (or JSON under `/api/`), escaped.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as WebError {
            let status: HTTPResponse.Status = switch error {
            case .notFound: .notFound
            case .badRequest: .badRequest
            case .unavailable: .serviceUnavailable
            }
            response = Self.error(status, error.description, request)
        } catch let error as HTTPError {
            let message = error.status == .notFound ? "there is no page at this address" : "\(error.status.reasonPhrase)"
            response = Self.error(error.status, message, request)
        } catch {
            response = Self.error(.internalServerError, "\(error)", request)
        }
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    static func error(_ status: HTTPResponse.Status, _ message: String, _ request: Request) -> Response {
        if request.uri.path.hasPrefix("/api/") {
            let reply = ControlReply.failure(id: nil, ControlFailure(code: "http-\(status.code)", message: message))
            return (try? Routes.json(reply, status: status)) ?? Response(status: status)
        }
        return Routes.response(status, "text/html; charset=utf-8", Pages.error(status.code, message).text)
    }
}
