"""Turns the JSON lines the benchmark programs printed into the side-by-side table and one JSON file.

    report.py RESULTS.jsonl MACHINE.json OUT.json [TABLE.txt]

Every row shows refreshd, its references measured in the same run, the ratio and the target.
Ratios are refreshd / C (lower is better for refreshd, 1.0x = as cheap as raw libuv) and
APScheduler / refreshd (how many times less refreshd spends).
"""

import json
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def find(rows, impl, bench, n=None):
    for r in rows:
        if r.get("impl") == impl and r.get("bench") == bench and (n is None or r.get("n") == n):
            return r
    return None


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}".rstrip("0").rstrip(".") if "." in f"{v:.{digits}f}" else f"{v}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}x"


def count(n):
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def main():
    rows = load(sys.argv[1])
    machine = json.load(open(sys.argv[2]))
    out_json, out_table = sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None
    table = []  # (line, metric, refreshd, refA, ratioA, refB, ratioB, target, verdict)
    verdicts = []

    def row(line, metric, r, a, ra, b, rb, target="", verdict=""):
        table.append([line, metric, fmt(r) if not isinstance(r, str) else r, fmt(a) if not isinstance(a, str) else a, ra,
                      fmt(b) if not isinstance(b, str) else b, rb, target, verdict])
        if verdict:
            verdicts.append({"line": line, "metric": metric, "target": target, "verdict": verdict})

    def met(ok):
        return "met" if ok else "MISSED"

    aps_dispatch = [r for r in rows if r.get("impl") == "apscheduler" and r.get("bench") == "dispatch"]
    aps_ref = max(aps_dispatch, key=lambda r: r["n"]) if aps_dispatch else None

    for r in sorted((r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "dispatch"), key=lambda r: r["n"]):
        n = r["n"]
        c = find(rows, "c-libuv", "dispatch", n)
        a = find(rows, "apscheduler", "dispatch", n)
        a_note = ""
        if a is None and aps_ref is not None:
            a, a_note = aps_ref, f" (n={count(aps_ref['n'])})"
        rate = r["rate_per_s"]
        line = f"Dispatch N={count(n)}, {r['spread_s']:g} s ({rate:,.0f}/s)"
        per = lambda x: x["cpu_s"] / x["n"] * 1e6 if x else None
        same_n = a is not None and a["n"] == n
        row(line, "CPU s (declare+submit+dispatch)", r["cpu_s"], c and c["cpu_s"], ratio(r["cpu_s"], c and c["cpu_s"]),
            (a["cpu_s"] if same_n else "-") if a else "-", ratio(a["cpu_s"], r["cpu_s"]) if same_n else "-")
        c_ok = c is not None and r["cpu_s"] <= 1.5 * c["cpu_s"]
        a_ok = a is not None and per(a) >= 20 * per(r)
        row("", "CPU µs per request", per(r), per(c), ratio(per(r), per(c)), (fmt(per(a)) + a_note) if a else "-",
            ratio(per(a), per(r)) if a else "-", "≤1.5x C; ≥20x less than APS",
            f"C: {met(c_ok)} ({per(r) / per(c):.1f}x); APS: {met(a_ok)} ({per(a) / per(r):.1f}x less)" if c and a else "")
        row("", "  of which submit / dispatch s", f"{fmt(r['cpu_submit_s'])} / {fmt(r['cpu_dispatch_s'])}"
            + f" (+declare {fmt(r['cpu_declare_s'])})",
            c and f"{fmt(c['cpu_submit_s'])} / {fmt(c['cpu_dispatch_s'])}", "",
            (f"{fmt(a['cpu_submit_s'])} / {fmt(a['cpu_dispatch_s'])}" if same_n else "-") if a else "-", "")
        row("", "wall s (setup+wait+dispatch)", r["wall_s"], c and c["wall_s"], "", a["wall_s"] if same_n else "-", "")
        for key, label in (("lateness_p50_ms", "lateness p50 ms"), ("lateness_p99_ms", "lateness p99 ms"),
                           ("lateness_max_ms", "lateness max ms")):
            target, verdict = "", ""
            if key == "lateness_p99_ms" and abs(rate - 10_000) < 1:
                target, verdict = "< 2 ms at 10k/s", f"{met(r[key] < 2)} ({r[key]:.2f} ms)"
            row("", label, r[key], c and c[key], ratio(r[key], c and c[key]), a[key] if same_n else "-",
                ratio(a[key], r[key]) if same_n else "-", target, verdict)
        early = [x for x in (r, c, a if same_n else None) if x]
        if any(x.get("early_launches", 0) for x in early) or any(x.get("setup_overran") for x in early):
            row("", "early launches / setup overran",
                *[f"{x.get('early_launches', 0)} / {x.get('setup_overran')}" if x else "-" for x in (r, c)], "",
                f"{a.get('early_launches', 0)} / {a.get('setup_overran')}" if same_n else "-", "")

    durable = find(rows, "refreshd", "dispatch_durable")
    if durable:
        mem = find(rows, "refreshd", "dispatch_in_memory", durable["n"])
        line = f"Dispatch with durable state N={count(durable['n'])}, {durable['spread_s']:g} s"
        row(line, "CPU s", durable["cpu_s"], mem and mem["cpu_s"], ratio(durable["cpu_s"], mem and mem["cpu_s"]), "-", "",
            "ref: refreshd in memory")
        row("", "submit wall s / launches per s (C col.: in memory)", f"{fmt(durable['submit_wall_s'])} / {fmt(durable['n'] / durable['dispatch_wall_s'])}"
            if "submit_wall_s" in durable else "-", mem and f"{fmt(mem.get('submit_wall_s'))} / -", "", "-", "")
        for key, label in (("lateness_p50_ms", "lateness p50 ms"), ("lateness_p99_ms", "lateness p99 ms"),
                           ("lateness_max_ms", "lateness max ms")):
            row("", label, durable[key], mem and mem[key], ratio(durable[key], mem and mem[key]), "-", "")

    m = find(rows, "refreshd", "memory")
    if m:
        c = find(rows, "c-libuv", "memory")
        a = find(rows, "apscheduler", "memory")
        line = f"Memory, {count(m['n'])} pending"
        row(line, "RSS bytes per pending request", m["pending_bytes_per_request"], c and c["pending_bytes_per_request"],
            ratio(m["pending_bytes_per_request"], c and c["pending_bytes_per_request"]),
            (fmt(a["pending_bytes_per_request"]) + (f" (n={count(a['n'])})" if a["n"] != m["n"] else "")) if a else "-",
            ratio(a and a["pending_bytes_per_request"], m["pending_bytes_per_request"]),
            "≤ 128 B", "judged on the total below")
        row("", "  + declaring the identifier, per id", m["declare_bytes_per_id"], "-", "", "(in add_job)", "")
        # A request's slot is reserved when its identifier is declared, so the pending phase alone
        # can read near zero: the target is judged on declaration + pending, per request.
        row("", "total per request (declare + pending)", m["total_bytes_per_request"], c and c["total_bytes_per_request"],
            ratio(m["total_bytes_per_request"], c and c["total_bytes_per_request"]), "-", "",
            "≤ 128 B", f"{met(m['total_bytes_per_request'] <= 128)} ({m['total_bytes_per_request']:.0f} B)")

    i = find(rows, "refreshd", "idle")
    if i:
        c = find(rows, "c-libuv", "idle")
        a = find(rows, "apscheduler", "idle")
        line = f"Idle, {count(i['n'])} due tomorrow, {i['seconds']} s"
        row(line, "loop thread wake-ups (vol. ctx sw.)", i["loop_voluntary_switches"], c and c["loop_voluntary_switches"], "",
            a and a["loop_voluntary_switches"], "", "0 beyond housekeeping",
            met(i["loop_voluntary_switches"] == 0) + f" ({i['loop_voluntary_switches']})")
        row("", "process vol. ctx switches (all threads)", i["process_voluntary_switches"],
            c and c["process_voluntary_switches"], "", a and a["process_voluntary_switches"], "")
        row("", "CPU s", i["cpu_s"], c and c["cpu_s"], "", a and a["cpu_s"], "")
        row("", "threads", i["threads"], c and c["threads"], "", a and a["threads"], "")

    k = find(rows, "refreshd", "commands")
    if k:
        c = find(rows, "c-posix_spawn", "commands")
        line = f"Command jobs, {k['n']} x /bin/true, cap {k['cap']}"
        row(line, "launches per s", k["launches_per_s"], c and c["launches_per_s"],
            ratio(k["launches_per_s"], c and c["launches_per_s"]), "-", "", "ref: posix_spawn floor")
        row("", "time to drain s", k["drain_s"], c and c["drain_s"], ratio(k["drain_s"], c and c["drain_s"]), "-", "")
        row("", "scheduler CPU s (children excluded)", k["cpu_s"], c and c["cpu_s"], ratio(k["cpu_s"], c and c["cpu_s"]), "-", "")
        # Issue 35: the same runs tracked without a cgroup (the /proc sweep), and embedded.
        for impl, label in (("refreshd-sweep", "without cgroups (/proc sweep)"), ("refreshd-embedded", "embedded (born in its cgroup, no sweep)")):
            o = find(rows, impl, "commands")
            if o:
                row(f"  {label}", "launches per s", o["launches_per_s"], c and c["launches_per_s"],
                    ratio(o["launches_per_s"], c and c["launches_per_s"]), "-", "")
                row("", "scheduler CPU s (children excluded)", o["cpu_s"], c and c["cpu_s"], ratio(o["cpu_s"], c and c["cpu_s"]), "-", "")

    g = find(rows, "refreshd", "check")
    if g:
        row(f"Config: refreshd check, {g['n']:,} files", "seconds (wall)", g["wall_s"], "-", "", "-", "", "< 1 s",
            f"{met(g['wall_s'] < 1)} ({g['wall_s']:.2f} s)")
        row("", "CPU s", g["cpu_s"], "-", "", "-", "")

    sim = find(rows, "refreshd", "simulate")
    if sim:
        year = sim["wall_s"] * 365 / max(1, sim["days"])
        row(f"Simulate: Jobs/, {sim['days']} days ({sim['runs']:,} runs, {sim['steps']:,} steps)",
            "wall s (virtual s per real s)", sim["wall_s"], "-", f"{sim['virtual_per_real']:,.0f}x", "-", "",
            "365 days < 1 s", f"{met(year < 1)} ({year:.1f} s a year)")
        thousand = 1000 / max(1e-9, sim["plans_per_s"])
        row(f"Explore: {sim['plans']} plans x 30 days", "plans per second", sim["plans_per_s"], "-", "", "-", "",
            "1,000 plans < 60 s", f"{met(thousand < 60)} ({thousand:.0f} s for 1,000)")
    layers = [r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "layers"]
    names = {"core": "core", "core+store": "core + store", "runtime": "runtime, simulated host",
             "simulate": "refreshd simulate, table"}
    if layers:
        days = sim["days"] if sim else 365
        # One row per layer, the label on the first only (the table rules off each label).
        for i, r in enumerate(layers):
            year = r["wall_s"] * 365 / max(1, days)
            label = f"Simulate by layer: heartbeat alone, {r['runs']:,} runs" if i == 0 else ""
            row(label, f"{names.get(r['layer'], r['layer'])}: µs per run (s a year)", r["us_per_run"], "-",
                f"{year:.2f} s", "-", "")
    allocs = [r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "allocations"]
    for i, r in enumerate(a for a in allocs if "layer" in a):
        label = f"Allocations: heartbeat alone, {r['runs']:,} runs" if i == 0 else ""
        row(label, f"{names.get(r['layer'], r['layer'])}: heap allocations per run", f"{r.get('allocs_per_run', 0):.1f}",
            "-", "", "-", "")
    jobs = next((a for a in allocs if "allocs_per_step" in a), None)
    if jobs:
        row(f"Allocations: Jobs/, {jobs['days']} days ({jobs['steps']:,} steps)", "heap allocations per step",
            f"{jobs['allocs_per_step']:.1f}", "-", "", "-", "", "0 in steady state",
            f"{met(jobs['allocs_per_step'] == 0)} ({jobs['allocs_per_step']:.1f} a step)")
    ins = find(rows, "refreshd", "instances-simulate")
    if ins:
        row(f"Simulate: a nightly template, {ins['instances']:,} instances, {ins['days']} days ({ins['runs']:,} runs)",
            "wall s / CPU s", f"{fmt(ins['wall_s'])} / {fmt(ins['cpu_s'])}", "-", "", "-", "",
            "30 days of 10,000 < 5 s", f"{met(ins['wall_s'] < 5)} ({ins['wall_s']:.1f} s)")
    cal = find(rows, "refreshd", "calendar")
    if cal:
        per = lambda c: c / max(1, cal["n"]) * 1e6
        row(f"Calendar: {cal['n']:,} next elapses, {cal['expressions']} expressions", "CPU µs per elapse (C col.: systemd-analyze)",
            per(cal["cpu_s"]), per(cal["ref_cpu_s"]), ratio(cal["cpu_s"], cal["ref_cpu_s"]), "-", "",
            "same instants as systemd", f"{met(cal['agree'])} (agree: {'yes' if cal['agree'] else 'NO'})")

    inst = find(rows, "refreshd", "instances")
    if inst and "bytes_per_instance" in inst:
        beyond = inst["bytes_per_instance"] - inst["mean_key_bytes"]
        row(f"Instances: {inst['n']:,} pending of one template", "RSS B per instance beyond the key's bytes",
            beyond, "-", "", "-", "", "<= 128 B", f"{met(beyond <= 128)} ({beyond:.0f} B)")
        row("", "add s: one call each / one addInstances batch", f"{fmt(inst['add_s'])} / {fmt(inst['batch_add_s'])}",
            "-", "", "-", "", "<= 1 s", f"{met(inst['batch_add_s'] <= 1)} ({inst['batch_add_s']:.2f} s batched)")
    rest = next((r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "instances" and "restore_s" in r), None)
    if rest:
        row(f"Instances: restart, {rest['restored_instances']:,} restored ({rest['restored_pending']:,} pending)",
            "restore s (open, register, restore)", rest["restore_s"], "-", "", "-", "", "<= 3 s",
            f"{met(rest['restore_s'] <= 3)} ({rest['restore_s']:.2f} s)")
    srch = find(rows, "refreshd", "instance-search")
    if srch:
        row(f"Instances: a search among {srch['n']:,} (page of 50 with its position)", "ms, slowest median of 12 searches",
            srch["worst_median_ms"], "-", "", "-", "", "< 200 ms",
            f"{met(srch['worst_median_ms'] < 200)} ({srch['worst_median_ms']:.0f} ms)")
    idis = find(rows, "refreshd", "instances_dispatch")
    if idis:
        row(f"Instances: {idis['due']:,} of {idis['n']:,} at {idis['rate_per_s']:,.0f}/s",
            "lateness ms p50 / p99 / max", f"{fmt(idis['lateness_p50_ms'])} / {fmt(idis['lateness_p99_ms'])} / {fmt(idis['lateness_max_ms'])}",
            "-", "", "-", "", "p99 < 2 ms", f"{met(idis['lateness_p99_ms'] < 2 and idis['launched'] == idis['due'])} ({idis['lateness_p99_ms']:.2f} ms)")

    shared = {r["store"]: r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "shared-database"}
    pg, lite = shared.get("postgres"), shared.get("sqlite")
    if pg:
        row(f"Shared database (issue 24): {pg['n']:,} launch batches, one shard", "fenced commits/s (C col.: SQLite)",
            pg["commits_per_s"], lite and lite["commits_per_s"], ratio(pg["commits_per_s"], lite and lite["commits_per_s"]),
            "-", "", ">= 1,000/s", f"{met(pg['commits_per_s'] >= 1000)} ({pg['commits_per_s']:,.0f}/s)")
        row("", "commit ms p50 / p99 (C col.: SQLite)", f"{fmt(pg['commit_p50_ms'])} / {fmt(pg['commit_p99_ms'])}",
            lite and f"{fmt(lite['commit_p50_ms'])} / {fmt(lite['commit_p99_ms'])}", "", "-", "")
    pg8 = shared.get("postgres-8-shards")
    if pg8:
        row(f"Shared database: {pg8['n']:,} launch batches, 8 shards committing at once", "fenced commits/s",
            pg8["commits_per_s"], "-", "", "-", "", ">= 1,000/s", f"{met(pg8['commits_per_s'] >= 1000)} ({pg8['commits_per_s']:,.0f}/s)")
        row("", "commit ms p50 / p99", f"{fmt(pg8['commit_p50_ms'])} / {fmt(pg8['commit_p99_ms'])}", "-", "", "-", "")

    lp = find(rows, "refreshd", "launches_postgres")
    if lp:
        dd = find(rows, "refreshd", "dispatch_durable")
        ok = lp["launched"] == lp["n"] and lp["rate_per_s"] >= 1000 and lp["lateness_p99_ms"] < 10
        row(f"Launches through the library, 1 node on PostgreSQL ({lp['shards']} shards): {lp['n']:,} closures at {lp['rate_per_s']:,.0f}/s",
            "lateness ms p50 / p99 / max (C col.: SQLite, dispatch durable)",
            f"{fmt(lp['lateness_p50_ms'])} / {fmt(lp['lateness_p99_ms'])} / {fmt(lp['lateness_max_ms'])}",
            dd and f"{fmt(dd['lateness_p50_ms'])} / {fmt(dd['lateness_p99_ms'])}", "", "-", "",
            ">= 1,000/s, p99 < 10 ms", f"{met(ok)} ({lp['launched']:,} launched, p99 {fmt(lp['lateness_p99_ms'])} ms)")

    launches = {(r["store"], r["nodes"]): r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "cluster-launches"}
    lite = launches.get(("sqlite", 1))
    for nodes in (1, 3):
        c = launches.get(("postgres", nodes))
        if not c:
            continue
        one = nodes == 1
        row(f"Cluster (issue 24): {c['jobs']:,} /bin/true jobs due every second, {nodes} real node{'s' if nodes > 1 else ''} on PostgreSQL",
            "durable launches/s (C col.: one machine on SQLite)", c["launches_per_s"], lite and lite["launches_per_s"],
            ratio(c["launches_per_s"], lite and lite["launches_per_s"]), "-", "",
            ">= 1,000/s" if one else "", f"{met(c['launches_per_s'] >= 1000)} ({c['launches_per_s']:,.0f}/s)" if one else "")
        row("", "lateness ms p50 / p99 (C col.: SQLite)", f"{fmt(c['lateness_p50_ms'])} / {fmt(c['lateness_p99_ms'])}",
            lite and f"{fmt(lite['lateness_p50_ms'])} / {fmt(lite['lateness_p99_ms'])}", "", "-", "",
            "p99 < 10 ms" if one else "", f"{met(c['lateness_p99_ms'] is not None and c['lateness_p99_ms'] < 10)} ({fmt(c['lateness_p99_ms'])} ms)" if one else "")
    tk = find(rows, "refreshd", "cluster-takeover")
    if tk:
        row(f"Cluster takeover: {tk['kills']} SIGKILLs of a leader, lease {tk['lease_s']} s ({tk['clusters']} clusters at once)",
            "s p50 / p99 / max", f"{fmt(tk['takeover_p50_s'])} / {fmt(tk['takeover_p99_s'])} / {fmt(tk['takeover_max_s'])}",
            "-", "", "-", "", "p99 < 15 s", f"{met(tk['takeover_p99_s'] < 15)} ({tk['takeover_p99_s']:.1f} s)")

    ci = find(rows, "refreshd", "cluster-instances")
    if ci:
        worst = max((b for b in ci["bytes_per_instance"] if b is not None), default=None)
        row(f"Cluster instances: {ci['instances']:,} of one template added through 1 of 3 nodes ({ci['shards']} shards)",
            "s until all stored", ci["all_stored_s"], "-", "", "-", "",
            "<= 3 s", f"{met(ci['all_stored_s'] <= 3 and ci['stored'] >= ci['instances'])} ({ci['all_stored_s']:.1f} s, {ci['stored']:,} stored)")
        row("", "B an instance on each node (RSS growth / instances its shards hold)",
            " / ".join(fmt(b) for b in ci["bytes_per_instance"]), "-", "", "-", "",
            "<= 128 B", f"{met(worst is not None and worst <= 128)} ({fmt(worst)} B at worst)")

    renders = [r for r in rows if r.get("impl") == "refreshd" and r.get("bench") == "render"]
    red = next((r for r in renders if r["strategy"] == "reduced-scale"), None)
    full = next((r for r in renders if r["strategy"] == "full-decode"), None)
    if red:
        mb = lambda r: r["peak_above_baseline_bytes"] / 1e6 if r else None
        row(f"Rendition: {red['source']} JPEG to {red['output']} (systemMedium)",
            "peak RSS above baseline MB (C col.: full decode)", mb(red), mb(full), ratio(mb(red), mb(full)), "-", "",
            "< 2 MB", f"{met(mb(red) < 2)} ({mb(red):.2f} MB)")
        row("", "wall s (C col.: full decode)", red["wall_s"], full and full["wall_s"],
            ratio(red["wall_s"], full and full["wall_s"]), "-", "")
        row("", "decoded at (scale)", f"{red['decoded']} ({red['scale']})", full and full["decoded"], "", "-", "")
    st = find(rows, "refreshd", "stage")
    if st:
        row(f"Staging a day: {st['assets']} assets x {st['families']} families ({st['renditions_written']} renditions)",
            "wall s / CPU s / peak MB above baseline",
            f"{fmt(st['wall_s'])} / {fmt(st['cpu_s'])} / {st['peak_above_baseline_bytes'] / 1e6:.1f}", "-", "", "-", "")
    rp = find(rows, "refreshd", "replay")
    if rp:
        row("Replay of 28 s of a real refreshd (5 jobs, a stop, a kill -9), same files (issue 34)",
            "runs ran / replayed / apart", f"{rp['ran']} / {rp['replayed']} / {rp['apart']}", "-", "", "-", "",
            "<= 1 run a job apart", f"{met(rp['apart'] <= rp['jobs'])} ({rp['exact_jobs']} of {rp['jobs']} jobs exact)")
        row("", "outcomes apart / lateness p50 apart ms / widgets exact / activities exact",
            f"{rp['outcomes_apart']} / {rp['lateness_p50_apart_ms']} / {rp['exact_widgets']} of {rp['widgets']} / "
            f"{rp['exact_activities']} of {rp['activities']}", "-", "", "-", "")
    header = ["line", "metric", "refreshd", "C reference", "refreshd/C", "APScheduler", "APS/refreshd", "target", "verdict"]
    widths = [max(len(str(x[col])) for x in table + [header]) for col in range(len(header))]
    lines = []
    title = (f"refreshd benchmarks, {machine.get('date', '')}: {machine.get('cpu', '')}, {machine.get('nproc', '')} cores, "
             f"{machine.get('memory', '')}, Linux {machine.get('kernel', '')}, {machine.get('swift', '')}, "
             f"libuv {machine.get('libuv', '')}, APScheduler {machine.get('apscheduler', '')}, "
             f"load average before/after {machine.get('load_before', '?')} / {machine.get('load_after', '?')}"
             + (f"; only {machine['only']}" if machine.get("only") else ""))
    lines.append(title)
    sep = "-+-".join("-" * w for w in widths)
    lines.append(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append(sep)
    for t in table:
        if t[0] and t is not table[0]:
            lines.append(sep)
        lines.append(" | ".join(str(x).ljust(w) for x, w in zip(t, widths)).rstrip())
    text = "\n".join(lines)
    print(text)
    if out_table:
        with open(out_table, "w") as f:
            f.write(text + "\n")
    with open(out_json, "w") as f:
        json.dump({"machine": machine, "results": rows, "verdicts": verdicts,
                   "table": [dict(zip(header, t)) for t in table]}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
