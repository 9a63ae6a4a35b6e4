import Glibc
import RefreshdCore
import RefreshdStore

/// Issue 33's search target: a search among 1,000,000 instances answers in < 200 ms. `--state
/// DIR` holds N instances of `bench.feed` (keys u0, u1, ...) and their requests, as `instances
/// --fill yes` makes it; this adds failure streaks to 1% of them, pauses 0.1% and starts a run
/// of 100, then opens the file read-only as the dashboard does and times each search (a page of
/// 50 with its position and total: the store's `searchInstances`, which `StateReader` calls on
/// one machine), `repeats` times after one warm-up: the median and the slowest, in ms; and what a
/// template's page reads (issue 33, item 6: its counts by state, the first page, the failing
/// ones and their states).
func instanceSearch(count n: Int, state: String, runs: Int, repeats: Int = 7) throws {
    let writer = try StateStore.open(directory: state)
    var changes: [StateChange] = []
    let start = Instant(milliseconds: 1_800_000_000_000)
    for i in stride(from: 0, to: n, by: 100) { changes.append(.failureStreak(identifier: "bench.feed[u\(i)]", count: 1 + i % 5)) }
    for i in stride(from: 7, to: n, by: 1000) {
        changes.append(.putRecord(MachineRecord(table: SchedulerCore.pausedTable, key: "bench.feed[u\(i)]", value: "{\"since\":0}")))
    }
    for i in 0..<100 {
        let id = "bench.feed[u\(i * 9_973 % max(1, n))]"
        changes.append(.runStarted(RunRecord(runID: Int64(1_000_000 + i), identifier: id, kind: .processing, submitted: start,
                                             earliest: start, started: start, deadline: start + .seconds(60))))
    }
    // Once per state (a second run searches what the first added).
    if try writer.failureStreaks().isEmpty { try writer.apply(changes) }
    // And a history of `runs` ended runs, one a second, of the instances in turn: every tenth
    // failed, every 97th expired (the runs search; the rows a month of 30,000 launches a day
    // leaves).
    let runStart = start + .seconds(3600)
    let firstRun: Int64 = 2_000_000
    if runs > 0, try writer.searchRuns(RunSearch(since: runStart), cursor: nil, limit: 0).total < runs {
        for batch in stride(from: 0, to: runs, by: 20_000) {
            var rows: [StateChange] = []
            for i in batch..<min(runs, batch + 20_000) {
                let id = "bench.feed[u\(i * 7 % max(1, n))]", at = runStart + .milliseconds(Int64(i) * 1000)
                let outcome: Outcome = i % 10 == 0 ? .failure : i % 97 == 0 ? .expired : .success
                rows.append(.runStarted(RunRecord(runID: firstRun + Int64(i), identifier: id, kind: .processing, submitted: at,
                                                  earliest: at, started: at, deadline: at + .seconds(60))))
                rows.append(.runEnded(runID: firstRun + Int64(i), identifier: id, ended: at + .milliseconds(500), outcome: outcome,
                                      exitStatus: outcome == .failure ? 1 : 0, signal: nil))
            }
            try writer.apply(rows)
        }
    }
    writer.close()

    let store = try StateStore.open(directory: state, readOnly: true)
    defer { store.close() }
    let middleKey = "u\(n / 2)"
    let cases: [(String, InstanceSearch, SearchCursor<String>?)] = [
        ("all_first", InstanceSearch(template: "bench.feed"), nil),
        ("all_middle_next", InstanceSearch(template: "bench.feed"), .after(middleKey)),
        ("all_middle_previous", InstanceSearch(template: "bench.feed"), .before(middleKey)),
        ("text_sparse", InstanceSearch(template: "bench.feed", text: "12345"), nil),
        ("text_dense", InstanceSearch(template: "bench.feed", text: "99"), nil),
        ("text_dense_next", InstanceSearch(template: "bench.feed", text: "99"), .after("u599")),
        ("pending_middle_next", InstanceSearch(template: "bench.feed", state: .pending), .after(middleKey)),
        ("pending_text", InstanceSearch(template: "bench.feed", text: "4242", state: .pending), nil),
        ("failing_first", InstanceSearch(template: "bench.feed", state: .failing), nil),
        ("failing_middle_previous", InstanceSearch(template: "bench.feed", state: .failing), .before(middleKey)),
        ("paused_first", InstanceSearch(template: "bench.feed", state: .paused), nil),
        ("running_first", InstanceSearch(template: "bench.feed", state: .running), nil),
    ]
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "instance-search")
    out.add("n", n)
    var worst = 0.0, worstCPU = 0.0
    /// One search `repeats` times after a warm-up: its wall and CPU medians, slowest, and total.
    func time(_ search: () throws -> Int) rethrows -> (median: Double, max: Double, cpu: Double, total: Int) {
        var times: [Double] = [], cpu: [Double] = []
        var found = 0
        for round in 0...repeats {
            let (t0, c0) = (Measure.monotonicSeconds(), threadCPUSeconds())
            found = try search()
            let (ms, cpuMs) = ((Measure.monotonicSeconds() - t0) * 1000, (threadCPUSeconds() - c0) * 1000)
            if round > 0 { times.append(ms); cpu.append(cpuMs) }
        }
        times.sort()
        cpu.sort()
        return (times[times.count / 2], times.last ?? 0, cpu[cpu.count / 2], found)
    }
    for (name, search, cursor) in cases {
        let t = try time { try store.searchInstances(search, cursor: cursor, limit: 50).total }
        out.add(name + "_median_ms", t.median)
        out.add(name + "_max_ms", t.max)
        // CPU time of the search (this thread's): what the wall time is on an idle core.
        out.add(name + "_cpu_median_ms", t.cpu)
        worstCPU = max(worstCPU, t.cpu)
        out.add(name + "_total", t.total)
        worst = max(worst, t.median)
    }
    // Issue 33, item 6: what a template's page reads from the store (one machine's): its
    // instances counted by state, the first page, its first 50 failing instances, and the
    // state of each of them by key. `template_counts`: the counts alone.
    let counts = try time { () throws -> Int in
        _ = try store.instanceCounts(of: "bench.feed")
        return 0
    }
    out.add("template_counts_median_ms", counts.median)
    out.add("template_counts_max_ms", counts.max)
    out.add("template_counts_cpu_median_ms", counts.cpu)
    let templatePage = try time { () throws -> Int in
        _ = try store.instanceCounts(of: "bench.feed")
        let page = try store.searchInstances(InstanceSearch(template: "bench.feed"), cursor: nil, limit: 50)
        let failing = try store.searchInstances(InstanceSearch(template: "bench.feed", state: .failing), cursor: nil, limit: 50)
        // The states of 100 instances by key, as many as the page and the failing list show
        // (every hundredth key is failing).
        let ids = (0..<50).map { "bench.feed[u\($0)]" } + (0..<50).map { "bench.feed[u\($0 * 100)]" }
        return page.total + failing.total + (try store.states(of: ids)).count
    }
    out.add("template_page_median_ms", templatePage.median)
    out.add("template_page_max_ms", templatePage.max)
    out.add("template_page_cpu_median_ms", templatePage.cpu)
    // Runs (issue 33: by job, outcome and time), newest start first, a page of 50.
    let middleStart = runStart + .milliseconds(Int64(runs / 2) * 1000)
    let middle = RunPosition(started: middleStart, runID: firstRun + Int64(runs / 2))
    let failed = RunSearch.ending(named: "failed")
    let runCases: [(String, RunSearch, SearchCursor<RunPosition>?)] = [
        ("runs_first", RunSearch(), nil),
        ("runs_middle_next", RunSearch(), .after(middle)),
        ("runs_middle_previous", RunSearch(), .before(middle)),
        ("runs_failed_first", RunSearch(ending: failed), nil),
        ("runs_failed_middle_next", RunSearch(ending: failed), .after(middle)),
        ("runs_one_instance", RunSearch(identifier: "bench.feed[u7]"), nil),
        ("runs_hour", RunSearch(since: middleStart, until: middleStart + .seconds(3600)), nil),
    ]
    var runsWorst = 0.0, runsWorstCPU = 0.0
    for (name, search, cursor) in runs > 0 ? runCases : [] {
        let t = try time { try store.searchRuns(search, cursor: cursor, limit: 50).total }
        out.add(name + "_median_ms", t.median)
        out.add(name + "_cpu_median_ms", t.cpu)
        out.add(name + "_total", t.total)
        runsWorst = max(runsWorst, t.median)
        runsWorstCPU = max(runsWorstCPU, t.cpu)
    }
    out.add("runs", runs)
    out.add("runs_worst_median_ms", runsWorst)
    out.add("runs_worst_cpu_median_ms", runsWorstCPU)
    out.add("worst_median_ms", worst)
    out.add("worst_cpu_median_ms", worstCPU)
    out.print()
}

/// This thread's CPU time, in seconds.
func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
