import RefreshdCore

/// What `refreshd why` knows about one identifier (a job, a timeline job, one family's provider,
/// a live activity), gathered from a live refreshd (its core's snapshot, definitions, machines,
/// store and recent observations) or, read-only, from the state files and the job files
/// (`WhyFacts.gather`). `WhyExplainer` turns it into a paragraph; gathering and explaining stay
/// apart so every holding reason is a unit test on plain values.
package struct WhyFacts: Sendable {
    package var identifier: String
    /// What the identifier names; `.job` also when the job files could not be read.
    package var subject: WhySubject
    package var now: Instant
    /// Where the facts were read (the words differ: only the state files mean refreshd is down).
    package var source: Source
    /// Asked of a running refreshd (false: from the state files, refreshd is not running).
    package var live: Bool { source != .stateFiles }
    /// The job's definition; nil when it is not declared (or unknown: no job files read).
    package var definition: TaskDefinition?
    /// Whether the identifier is known to be undeclared (live, or the job files were read).
    package var knownUndeclared: Bool
    /// Its pending request, with its place in the core when live (nil place from the files).
    package var pending: SchedulerSnapshot.Pending?
    /// Its run in flight, if any (live only; from the files, a run without an end).
    package var running: SchedulerSnapshot.Run?
    /// Every run in flight, and the cap (live only).
    package var runsInFlight: [SchedulerSnapshot.Run]
    package var maxConcurrentRuns: Int?
    /// The conditions last read (live only).
    package var conditions: Conditions?
    /// Consecutive failed attempts.
    package var failureStreak: Int
    /// Its most recent runs, newest first.
    package var recentRuns: [StatusReport.Run]
    /// Calendar slots missed by day, newest first (from the counters).
    package var missedByDay: [(day: String, count: Int)]
    /// Its most recent observations, oldest first (live only).
    package var recentEvents: [RuntimeObservation]
    /// When the identifier is a widget provider (`<job>#<family>`): its widget's status.
    package var widget: TimelineSnapshot.Widget?
    /// When the identifier is a timeline job: its families' widgets' status (families with
    /// nothing saved yet are missing).
    package var widgets: [TimelineSnapshot.Widget]
    /// The live activities the job owns, or the one the identifier names.
    package var activities: [ActivitySnapshot.Entry]
    /// Dismissed activities the job owned, or the one the identifier names, most recent last.
    package var dismissed: [DismissedActivity]
    /// For an unknown identifier: known ones it may have meant (at most three).
    package var suggestions: [String]
    /// Issue 23: the template of an instance (`template[key]`), or, when the identifier is a
    /// template's, how many instances it has (nil: unknown, from the files).
    package var instanceOf: String?
    package var isTemplate = false
    package var templateInstances: Int?
    /// The pause that holds it (its own, or its template's), if any (issue 33).
    package var paused: SchedulerSnapshot.Paused?

    package init(identifier: String, now: Instant, live: Bool, definition: TaskDefinition? = nil,
                knownUndeclared: Bool = false, pending: SchedulerSnapshot.Pending? = nil,
                running: SchedulerSnapshot.Run? = nil, runsInFlight: [SchedulerSnapshot.Run] = [],
                maxConcurrentRuns: Int? = nil, conditions: Conditions? = nil, failureStreak: Int = 0,
                recentRuns: [StatusReport.Run] = [], missedByDay: [(day: String, count: Int)] = [],
                recentEvents: [RuntimeObservation] = [], widget: TimelineSnapshot.Widget? = nil,
                subject: WhySubject? = nil, widgets: [TimelineSnapshot.Widget] = [],
                activities: [ActivitySnapshot.Entry] = [], dismissed: [DismissedActivity] = [],
                suggestions: [String] = []) {
        self.identifier = identifier
        self.subject = subject ?? (knownUndeclared && definition == nil ? .unknown : .job)
        self.now = now
        self.source = live ? .memory : .stateFiles
        self.definition = definition
        self.knownUndeclared = knownUndeclared
        self.pending = pending
        self.running = running
        self.runsInFlight = runsInFlight
        self.maxConcurrentRuns = maxConcurrentRuns
        self.conditions = conditions
        self.failureStreak = failureStreak
        self.recentRuns = recentRuns
        self.missedByDay = missedByDay
        self.recentEvents = recentEvents
        self.widget = widget
        self.widgets = widgets
        self.activities = activities
        self.dismissed = dismissed
        self.suggestions = suggestions
    }
}

extension WhyFacts {
    /// Where `why`'s facts come from.
    package enum Source: Sendable, Equatable {
        /// A running scheduler's memory: a request's place in its queue, conditions, the cap.
        case memory
        /// A cluster's database, read by any node: the shards' leaders run, but where a request
        /// waits in its leader's queue is known only there.
        case database
        /// The state files with refreshd stopped.
        case stateFiles
    }

    /// The pause among `paused` that holds `identifier`: its own, else its template's.
    package static func pause(of identifier: String, among paused: [SchedulerSnapshot.Paused]) -> SchedulerSnapshot.Paused? {
        let template = InstanceName.split(identifier)?.template
        return paused.first { $0.identifier == identifier } ?? paused.first { $0.identifier == template }
    }
}

/// What an identifier given to `refreshd why` names, so each is explained in its own terms.
package enum WhySubject: Sendable, Hashable {
    /// An app-refresh or processing job (or, when the job files could not be read, maybe one).
    case job
    /// A timeline job: it never runs on a schedule of its own; each family's provider
    /// (`JOB#FAMILY`) runs when that family's widget reloads.
    case timeline(kind: String, families: [String])
    /// One family's provider of a timeline job (`JOB#FAMILY`).
    case provider(job: String, kind: String, family: String)
    /// A live activity, by its id (live or recently dismissed).
    case activity
    /// Nothing refreshd knows by that name: `why` exits 1.
    case unknown
    // A template's instance is `.job` (it runs as a job does); an instance of a timeline
    // template is `.timeline` of its own kind (`addSubject`, which knows the saved widgets).

    /// What `identifier` names among `jobs` (nil: the job files could not be read) and the
    /// activities. A job's own identifier comes first, then `JOB#FAMILY` of a timeline job's
    /// declared family, then an activity id.
    package static func resolve(_ identifier: String, jobs: [JobSpec]?, activities: ActivitySnapshot) -> WhySubject {
        if let (template, _) = InstanceName.split(identifier),
           jobs?.contains(where: { $0.identifier == template && $0.template != nil }) == true {
            return .job  // an instance of a template: a job of its own
        }
        if let job = jobs?.first(where: { $0.identifier == identifier }) {
            guard let widget = job.widget else { return .job }
            return .timeline(kind: widget.kind, families: widget.families)
        }
        if let hash = identifier.lastIndex(of: "#") {
            let name = String(identifier[..<hash])
            let family = String(identifier[identifier.index(after: hash)...])
            if let widget = jobs?.first(where: { $0.identifier == name })?.widget, widget.families.contains(family) {
                return .provider(job: name, kind: widget.kind, family: family)
            }
        }
        if activities.activities.contains(where: { $0.id == identifier })
            || activities.recentlyDismissed.contains(where: { $0.id == identifier }) {
            return .activity
        }
        return jobs == nil ? .job : .unknown
    }

    /// Up to three known names close to an unknown `identifier`: those it is the start of (or
    /// that are the start of it, by whole labels), one or two edits away, or another family of
    /// the job it names; for `X#FAMILY`, providers of that family.
    package static func suggestions(for identifier: String, jobs: [JobSpec], activities: ActivitySnapshot) -> [String] {
        var known: [String] = []
        for job in jobs {
            known.append(job.identifier)
            for family in job.widget?.families ?? [] {
                known.append(WidgetSpec.providerIdentifier(job: job.identifier, family: family))
            }
        }
        known += activities.activities.map(\.id)
        let hash = identifier.lastIndex(of: "#")
        let stem = hash.map { String(identifier[..<$0]) } ?? identifier
        let family = hash.map { String(identifier[identifier.index(after: $0)...]) }
        var found: [String] = []
        for name in known where !found.contains(name) {
            let nameHash = name.lastIndex(of: "#")
            let nameStem = nameHash.map { String(name[..<$0]) } ?? name
            let nameFamily = nameHash.map { String(name[name.index(after: $0)...]) }
            let sameJob = nameStem == stem
            let related = sameJob || nameStem.hasPrefix(stem + ".") || stem.hasPrefix(nameStem + ".")
                || EditDistance.between(identifier, name, limit: 2) <= 2
            // `JOB#FAMILY` asks for a provider: the job's other families, or other jobs' providers
            // of the same family.
            if related && (family == nil || (nameFamily != nil && (sameJob || nameFamily == family))) { found.append(name) }
        }
        return Array(found.prefix(3))
    }
}

extension SchedulerSnapshot.Pending {
    /// A pending request as the state file keeps it: no place (only a live core knows that).
    package init(_ p: PendingRequest) {
        self.init(identifier: p.identifier, namespace: p.namespace, kind: p.kind, earliest: p.earliest,
                  submitted: p.submitted, sequence: p.sequence, origin: p.origin,
                  requiresExternalPower: p.requiresExternalPower,
                  requiresNetworkConnectivity: p.requiresNetworkConnectivity, wake: nil, place: nil)
    }
}
