import Foundation
import Hummingbird
import NIOCore
import RefreshdCore
import RefreshdRuntime

/// The dashboard's URLs: pages, `/api/...` (the same facts as JSON), `/api/events` (SSE),
/// actions (`POST`, bearer token), the rendition images, `/metrics`, `/healthz`, static files.
struct Routes: Sendable {
    let source: DashboardSource
    /// Nil: actions are off (no `--http-token-file`).
    let token: String?

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        router.get("/") { request, _ in try await page(request) { Pages.overview(try await overview()) } }
        router.get("/api/overview") { _, _ in try await json { try await overview() } }
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
        router.get("/failures") { request, _ in try await page(request) { Pages.failures(try await failures()) } }
        router.get("/api/failures") { _, _ in try await json { try await failures() } }
        router.get("/widgets") { request, _ in try await page(request) { Pages.widgets(try await widgets()) } }
        router.get("/api/widgets") { _, _ in try await json { try await widgets() } }
        router.get("/widgets/:kind/:family/rendition") { _, context in
            try await rendition(kind: Self.parameter(context, "kind"), family: Self.parameter(context, "family"))
        }
        router.get("/activities") { request, _ in try await page(request) { Pages.activities(try await activities()) } }
        router.get("/api/activities") { _, _ in try await json { try await activities() } }
        router.get("/cluster") { request, _ in try await page(request) { Pages.cluster(try await cluster()) } }
        router.get("/api/cluster") { _, _ in try await json { try await cluster() } }
        router.get("/overview.svg") { _, _ in try await picture() }
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

    // MARK: Facts

    func overview() async throws -> OverviewData {
        let live = try await source.live()
        let since = live.now - .seconds(86_400)
        let failing = live.snapshot.failureStreaks.map(\.identifier).filter { Views.template(of: $0) == nil }
        let templates = live.jobs.values.filter { $0.template != nil }.map(\.identifier)
        let (window, truncated, lastRuns, counts) = try await source.readState { state in
            let window = try state.runs(since: since, limit: Views.maxWindowRuns)
            return (window.runs, window.truncated, try state.states(of: failing),
                    Dictionary(uniqueKeysWithValues: try templates.map { ($0, try state.instanceCounts(of: $0)) }))
        }
        return Views.overview(live, window: window, truncated: truncated, lastRuns: lastRuns, templates: counts,
                              notifications: NotificationsData.make(held: live.heldNotifications, counts: live.notificationCounts,
                                                                    notices: source.notices))
    }

    func failures() async throws -> FailuresData {
        let live = try await source.live()
        let since = live.now - .seconds(86_400)
        let jobs = Array(live.jobs.values)
        let stored = try await source.readState { try StoredFailures.read($0, jobs: jobs, since: since) }
        return Views.failures(live, stored: stored,
                              notifications: NotificationsData.make(held: live.heldNotifications, counts: live.notificationCounts,
                                                                    notices: source.notices),
                              actionsEnabled: token != nil)
    }

    /// The jobs in force, `?q=` (in the identifier, any case) and `?state=` a page of them
    /// (`?after=` / `?before=` an identifier).
    func jobs(_ request: Request? = nil) async throws -> JobsData {
        let query = try request.map { try Self.searchQuery($0, keys: false) } ?? SearchQuery(q: "", state: nil)
        let cursor: SearchCursor<String>? = try request.flatMap { try Self.cursor($0) { $0 } }
        let live = try await source.live()
        // Templates' instances counted by the store when the page is asked for, not with every
        // gather of the live facts; a job's last run (a timeline job's: its providers') by key.
        let specs = live.jobs.values.sorted { $0.identifier < $1.identifier }
        let templates = specs.filter { $0.template != nil }.map(\.identifier)
        let own = specs.filter { $0.template == nil }.flatMap { Self.runIdentifiers(of: $0) }
        let (states, allRuns, whys, counts) = try await source.readState { state in
            let counters = try state.dailyCounters(days: 7)
            return (try state.states(of: own), try state.recentRuns(limit: 500),
                    try specs.map { try Views.why($0.identifier, live, store: state.store(of: $0.identifier), counters: counters) },
                    Dictionary(uniqueKeysWithValues: try templates.map { ($0, try state.instanceCounts(of: $0)) }))
        }
        let rows = zip(specs, whys).map { spec, why in
            Views.jobRow(spec, live, lastRun: Self.lastRun(of: spec, states: states, recent: allRuns), why: why,
                         instances: counts[spec.identifier])
        }
        let page = Views.searchJobs(rows, query, cursor: cursor, limit: Views.jobsPageSize)
        return JobsData(now: live.now, jobs: page.items, search: query, page: PageInfo(page) { $0.identifier })
    }

    /// A job's page; a template's has a page of its instances, `?q=` (part of a key) and
    /// `?state=` searched by the stores, `?after=` / `?beforeKey=` a key.
    func job(_ id: String, before: Int64?, request: Request? = nil) async throws -> JobData {
        // An instance (`TEMPLATE[KEY]`) has its template's spec; the live facts hold its pending
        // requests (its own, its providers') only when asked for.
        var instanceOf: String?
        var instance: InstanceRecord?
        let jobs = source.jobs()
        if jobs[id] == nil, let split = InstanceName.split(id), jobs[split.template]?.template != nil {
            instance = try await source.readState { try $0.instance(id) }
            if instance != nil { instanceOf = split.template }
        }
        let live = try await source.live(also: instanceOf.flatMap { jobs[$0] }.map { spec in
            [id] + (spec.widget?.families ?? []).map { WidgetSpec.providerIdentifier(job: id, family: $0) }
        } ?? [])
        guard let spec = live.jobs[id] ?? instanceOf.flatMap({ live.jobs[$0] }) else {
            throw WebError.notFound("no loaded job is called “\(id)”; see /jobs for the jobs in force")
        }
        let isTemplate = spec.template != nil && instanceOf == nil
        // The job's own identifiers (a timeline job's providers too; an instance's of its
        // template's families), whose last run and state are read by key.
        let families = spec.widget?.families ?? []
        let own = isTemplate ? [] : [id] + families.map { WidgetSpec.providerIdentifier(job: id, family: $0) }
        let (states, allRuns, why, page) = try await source.readState { state in
            (try state.states(of: own), try state.recentRuns(limit: 500),
             try Views.why(id, live, store: state.store(of: id), counters: try state.dailyCounters(days: 7)),
             try state.runs(of: id, before: before, pageSize: Views.pageSize, belongs: { Views.belongs($0, to: id) }))
        }
        var template: TemplateData?
        var counts: InstanceCounts?
        if isTemplate, let parameters = spec.template?.parameters {
            let query = try request.map { try Self.searchQuery($0, keys: true) } ?? SearchQuery(q: "", state: nil)
            let cursor: SearchCursor<String>? = try request.flatMap { request in
                try Self.cursor(request, beforeName: "beforeKey") { InstanceName.isValidKey($0) ? $0 : nil }
            }
            let search = InstanceSearch(template: id, text: query.q, state: query.state)
            // Counted, the failing ones (first) and a page of the list, each instance with its
            // state: every part on the stores' indexes, none of every instance or request.
            let (found, all, failing, rowStates) = try await source.readState { state in
                let found = try state.searchInstances(search, cursor: cursor, limit: Views.instancesPageSize)
                let failing = try state.searchInstances(InstanceSearch(template: id, state: .failing), cursor: nil, limit: Views.failingShown)
                let rowStates = try state.instanceStates(template: id, keys: found.items.map(\.key) + failing.items.map(\.key),
                                                         families: families)
                return (found, try state.instanceCounts(of: id), failing.items, rowStates)
            }
            counts = all
            let templatePaused = all.count > 0 && all.paused == all.count
            let failingRows = failing.map { i -> FailingJob in
                let s = rowStates[i.key]
                return FailingJob(identifier: InstanceName.identifier(template: id, key: i.key),
                                  lastOutcome: s?.lastRun.map { $0.outcome?.rawValue ?? "running" } ?? "none",
                                  lastRunID: s?.lastRun?.runID ?? 0, retryStreak: s?.failureStreak ?? 0)
            }
            let page = PageInfo(found) { $0.key }
            template = TemplateData(parameters: parameters, count: all.count, counts: all,
                                    failing: failingRows, failingMore: all.failing > failingRows.count,
                                    instances: found.items.map { record in
                                        var row = InstanceRow(record, rowStates[record.key])
                                        row.paused = row.paused || templatePaused
                                        return row
                                    },
                                    nextAfter: page.next, search: query, page: page)
        }
        let lastRun = isTemplate ? Self.lastRun(ofInstancesOf: id, recent: allRuns)
            : IdentifierState.folded(own.compactMap { states[$0] }).lastRun.map(StatusReport.Run.init)
        let row = Views.jobRow(spec, id: id, live, lastRun: lastRun, why: why, instances: counts)
        // An instance's page shows what its runs execute: the template's command filled with
        // its values.
        var shown = spec
        // The store keeps no values for a template of one parameter: its value is the key.
        if let instance { shown = spec.filled(SchedulerCore.withSingleValue(instance, spec.template?.parameters ?? []).values) }
        return JobData(now: live.now, job: row, command: shown.action == nil ? shown.command.argv : nil, action: shown.action?.name,
                       allowanceMilliseconds: Int64(spec.definition.allowance.components.seconds * 1000),
                       runs: page.runs.map { Views.runRow($0) }, nextBefore: page.nextBefore,
                       nextSlots: Views.nextSlots(spec, after: live.now), actionsEnabled: token != nil,
                       notifications: NotificationsData.make(held: live.heldNotifications, counts: live.notificationCounts,
                                                             notices: source.notices, job: id),
                       template: template, instanceOf: instanceOf)
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
        let folder = source.parts.jobsDirectory
        let result = try await source.simulations.result(jobs: folder, .init(days: days, start: start, seed: seed))
        let live = try await source.live()
        let simulated = Set(result.scenario.jobs.map(\.spec.identifier))
        let inForce = Set(live.jobs.keys)
        return SimulateData(jobsFolder: folder, start: result.scenario.start, days: result.scenario.days, seed: result.scenario.seed,
                            stopped: result.stopped, elapsedMilliseconds: result.elapsedMilliseconds, steps: result.report.steps,
                            total: result.report.total, violations: result.report.violations, text: result.report.text,
                            svg: result.svg, notInFolder: inForce.subtracting(simulated).sorted(),
                            notInForce: simulated.subtracting(inForce).sorted())
    }

    func widgets() async throws -> WidgetsData {
        let live = try await source.live()
        let records = try await source.readState { state in
            try state.savedMachineState().widgets.map { ($0.widget, $0.timeline?.entries ?? [], $0.ledger) }
        }
        let rows = live.timelines.widgets.map { w -> WidgetRow in
            let record = records.first { $0.0.kind == w.kind && $0.0.family == w.family }
            return WidgetRow(widget: w, rendition: Views.rendition(of: w.shown), entries: record?.1 ?? [], ledger: record?.2 ?? [])
        }
        return WidgetsData(now: live.now, widgets: rows, actionsEnabled: token != nil)
    }

    func activities() async throws -> ActivitiesData {
        let live = try await source.live()
        return ActivitiesData(now: live.now, activities: live.activities, actionsEnabled: token != nil)
    }

    func cluster() async throws -> ClusterData {
        guard let node = source.parts.node else {
            throw WebError.notFound("this refreshd runs on one machine (no --store): there is no cluster to show")
        }
        let view = try await source.readState { _ in try node.view() }
        return ClusterData(now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970), cluster: view.cluster, history: node.history())
    }

    func picture() async throws -> Response {
        let live = try await source.live()
        let since = live.now - .seconds(86_400)
        let runs = try await source.readState { try $0.runs(since: since, limit: Views.maxWindowRuns).runs }
        let templates = Set(live.jobs.values.filter { $0.template != nil }.map(\.identifier))
        let svg = OverviewPicture.svg(runs: runs, jobs: Array(live.jobs.keys), templates: templates, now: live.now, violations: live.violations)
        return Self.response(.ok, "image/svg+xml", svg)
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

    /// The identifiers a job's runs have: its own, and a timeline job's providers'.
    static func runIdentifiers(of spec: JobSpec) -> [String] {
        [spec.identifier] + (spec.widget?.families ?? []).map { WidgetSpec.providerIdentifier(job: spec.identifier, family: $0) }
    }

    /// A job's latest run (a timeline job's: its providers' latest) from `states`; a template's,
    /// its instances' latest among the `recent` runs.
    static func lastRun(of spec: JobSpec, states: [String: IdentifierState], recent: [RunRecord]) -> StatusReport.Run? {
        if spec.template != nil { return lastRun(ofInstancesOf: spec.identifier, recent: recent) }
        return IdentifierState.folded(runIdentifiers(of: spec).compactMap { states[$0] }).lastRun.map(StatusReport.Run.init)
    }

    /// The latest run of a template's instances among `recent` (newest first).
    static func lastRun(ofInstancesOf template: String, recent: [RunRecord]) -> StatusReport.Run? {
        recent.first { Views.template(of: $0.identifier) == template }.map(StatusReport.Run.init)
    }

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
