import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation
import RefreshdStore

/// What each page and its `/api/...` twin show, gathered from the live facts (`DashboardSource`)
/// and the stores: the dashboard's facts without HTTP. The routes read a request into these
/// calls' arguments and write their answers as HTML or JSON.
package struct Facts: Sendable {
    package let source: DashboardSource
    /// Whether actions are on (refreshd has a bearer token): the pages offer them, or say why not.
    package let actionsEnabled: Bool

    package init(source: DashboardSource, actionsEnabled: Bool) {
        (self.source, self.actionsEnabled) = (source, actionsEnabled)
    }


    package func overview() async throws -> OverviewData {
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

    package func failures() async throws -> FailuresData {
        let live = try await source.live()
        let since = live.now - .seconds(86_400)
        let jobs = Array(live.jobs.values)
        let stored = try await source.readState { try StoredFailures.read($0, jobs: jobs, since: since) }
        return Views.failures(live, stored: stored,
                              notifications: NotificationsData.make(held: live.heldNotifications, counts: live.notificationCounts,
                                                                    notices: source.notices),
                              actionsEnabled: actionsEnabled)
    }

    /// The jobs in force, `query` (`?q=`, in the identifier, any case; `?state=`) a page of them
    /// from `cursor` (`?after=` / `?before=` an identifier).
    package func jobs(_ query: SearchQuery = SearchQuery(), cursor: SearchCursor<String>? = nil) async throws -> JobsData {
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

    /// A job's page from the run `before` on; a template's has a page of its instances, searched
    /// by the stores: `instanceSearch` gives the search (`?q=`, part of a key; `?state=`) and the
    /// cursor (`?after=` / `?beforeKey=` a key), read for a template's page only (another page
    /// ignores those parameters).
    package func job(_ id: String, before: Int64?,
                     instanceSearch: () throws -> (SearchQuery, SearchCursor<String>?) = { (SearchQuery(), nil) }) async throws -> JobData {
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
            let (query, cursor) = try instanceSearch()
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
                       nextSlots: Views.nextSlots(spec, after: live.now), actionsEnabled: actionsEnabled,
                       notifications: NotificationsData.make(held: live.heldNotifications, counts: live.notificationCounts,
                                                             notices: source.notices, job: id),
                       template: template, instanceOf: instanceOf)
    }

    /// The jobs folder simulated for `settings` (`?days=N[&start=ISO][&seed=S]`).
    package func simulate(_ settings: SimulationRunner.Settings) async throws -> SimulateData {
        let folder = source.parts.jobsDirectory
        let result = try await source.simulations.result(jobs: folder, settings)
        let live = try await source.live()
        let simulated = Set(result.scenario.jobs.map(\.spec.identifier))
        let inForce = Set(live.jobs.keys)
        return SimulateData(jobsFolder: folder, start: result.scenario.start, days: result.scenario.days, seed: result.scenario.seed,
                            stopped: result.stopped, elapsedMilliseconds: result.elapsedMilliseconds, steps: result.report.steps,
                            total: result.report.total, violations: result.report.violations, text: result.report.text,
                            svg: result.svg, notInFolder: inForce.subtracting(simulated).sorted(),
                            notInForce: simulated.subtracting(inForce).sorted())
    }

    package func widgets() async throws -> WidgetsData {
        let live = try await source.live()
        let records = try await source.readState { state in
            try state.savedMachineState().widgets.map { ($0.widget, $0.timeline?.entries ?? [], $0.ledger) }
        }
        let rows = live.timelines.widgets.map { w -> WidgetRow in
            let record = records.first { $0.0.kind == w.kind && $0.0.family == w.family }
            return WidgetRow(widget: w, rendition: Views.rendition(of: w.shown), entries: record?.1 ?? [], ledger: record?.2 ?? [])
        }
        return WidgetsData(now: live.now, widgets: rows, actionsEnabled: actionsEnabled)
    }

    package func activities() async throws -> ActivitiesData {
        let live = try await source.live()
        return ActivitiesData(now: live.now, activities: live.activities, actionsEnabled: actionsEnabled)
    }

    package func cluster() async throws -> ClusterData {
        guard let node = source.parts.node else {
            throw WebError.notFound("this refreshd runs on one machine (no --store): there is no cluster to show")
        }
        let view = try await source.readState { _ in try node.view() }
        return ClusterData(now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970), cluster: view.cluster, history: node.history())
    }


    /// A page of a template's instances: `query` searched by the stores from `cursor`.
    package func instances(_ id: String, _ query: SearchQuery, cursor: SearchCursor<String>?) async throws -> InstancesData {
        guard source.jobs()[id]?.template != nil else {
            throw WebError.notFound("no loaded template is called “\(id)”; see /jobs for the jobs in force")
        }
        let search = InstanceSearch(template: id, text: query.q, state: query.state)
        let found = try await source.readState { try $0.searchInstances(search, cursor: cursor, limit: Views.instancesPageSize) }
        return InstancesData(template: id, search: query, instances: found.items, page: PageInfo(found) { $0.key })
    }

    /// A page of the runs `search` finds from `cursor` (`outcome`: the name it was asked by).
    package func runs(_ search: RunSearch, outcome: String?, cursor: SearchCursor<RunPosition>?) async throws -> RunsData {
        let page = try await source.readState { try $0.searchRuns(search, cursor: cursor, limit: Views.runsPageSize) }
        // The wall clock, not the live facts' (their snapshot holds every pending request: seconds
        // to gather at a million instances, for a time the page only prints).
        return RunsData(now: Instant(secondsSinceEpoch: Date().timeIntervalSince1970), job: search.identifier, outcome: outcome,
                        since: search.since, until: search.until,
                        runs: page.items.map { Views.runRow($0) }, page: PageInfo(page) { RunPosition($0).text })
    }

    /// The overview's picture: the last 24 hours' runs, as SVG.
    package func picture() async throws -> String {
        let live = try await source.live()
        let since = live.now - .seconds(86_400)
        let runs = try await source.readState { try $0.runs(since: since, limit: Views.maxWindowRuns).runs }
        let templates = Set(live.jobs.values.filter { $0.template != nil }.map(\.identifier))
        return OverviewPicture.svg(runs: runs, jobs: Array(live.jobs.keys), templates: templates, now: live.now, violations: live.violations)
    }

    /// What ran in `settings`' period, replayed (and with a what-if folder, what it would do).
    package func replay(_ settings: ReplayRunner.Settings) async throws -> ReplayData {
        let (state, jobs) = (source.parts.stateDirectory, source.parts.jobsDirectory)
        let result = try await source.replays.result(state: state, jobs: jobs, settings)
        return ReplayData(result, state: state, jobsFolder: jobs)
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
}
