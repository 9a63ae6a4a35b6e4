/// The `# HELP` line of each metric refreshd exports: what it counts, for whoever reads a
/// scrape or a dashboard without the source at hand.
///
/// Why a pass over the text: swift-prometheus takes help text only when a metric is made
/// through its registry, and refreshd makes them through swift-metrics' factory (which passes
/// none); the registry refuses one name with two help texts. So the exposition gets a `# HELP`
/// line before each family's `# TYPE` line here, with the same effect for a scraper.
enum MetricsHelp {
    static let text: [String: String] = [
        "refreshd_pending_requests": "Pending requests: submitted and not launched yet.",
        "refreshd_runs_in_flight": "Runs launched and not finished.",
        "refreshd_launches_total": "Runs launched since refreshd started, by job.",
        "refreshd_runs_total": "Runs finished since refreshd started, by job and outcome (success, failure, expired, crashed, interrupted).",
        "refreshd_missed_slots_total": "Calendar slots that passed unrun (refreshd down, suspend, clock steps) since refreshd started, by job.",
        "refreshd_launch_lateness_seconds": "Time from a request's earliest begin date to its launch, by job.",
        "refreshd_widget_budget_left": "Reloads left in a widget family's budget over the trailing 24 hours (not exported for an unlimited budget).",
        "refreshd_widget_stale": "1 while a widget family is stale, else 0.",
        "refreshd_stale_widgets": "Widget families stale now.",
        "refreshd_template_widgets": "Widget families of a timeline template's instances, by template (job).",
        "refreshd_template_widgets_stale": "Stale widget families of a timeline template's instances, by template (job).",
        "refreshd_activities": "Live activities in each state; dismissed counts the recent history.",
        "refreshd_failing_instances": "Instances of a template whose last attempts failed (a retry streak), by template (job).",
        "refreshd_failing_instance_streak": "Consecutive failed attempts of the 10 most failing instances of each template, by job and instance key.",
        "refreshd_run_cpu_seconds": "CPU time of each ended command run, by job: all its processes (a cgroup per run), else the command and the children it waited for.",
        "refreshd_run_peak_memory_bytes": "Peak memory of each ended command run, by job: all its processes, measured only in a cgroup per run with the memory controller.",
        "refreshd_notifications_total": "Failure and recovery notifications since refreshd started, by job, kind and result (delivered, retry: an attempt failed, given_up, dropped).",
    ]

    /// `exposition` with a `# HELP NAME TEXT` line before each `# TYPE NAME ...` line that has
    /// none (help text escaped as the format asks: backslash and newline).
    static func annotate(_ exposition: String) -> String {
        var out = ""
        out.reserveCapacity(exposition.utf8.count + 1024)
        var previous: Substring = ""
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), !previous.hasPrefix("# HELP ") {
                let name = line.dropFirst("# TYPE ".count).prefix { $0 != " " }
                if let help = text[String(name)] {
                    let escaped = help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
                    out += "# HELP \(name) \(escaped)\n"
                }
            }
            out += line
            out += "\n"
            previous = line
        }
        out.removeLast()  // the split gave one line more than there were newlines
        return out
    }
}
