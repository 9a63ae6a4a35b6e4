"""APScheduler 3.11 doing what refreshd-bench does: date-triggered jobs in-process.

    apscheduler_bench.py dispatch N SPREAD_MS MARGIN_MS
    apscheduler_bench.py memory N
    apscheduler_bench.py idle N SECONDS

Prints one JSON object on stdout. The scheduler is APScheduler's usual setup: a
BackgroundScheduler with its default MemoryJobStore and ThreadPoolExecutor (10 workers), one
`add_job(fn, "date", run_date=...)` per request, added before `start()`. misfire_grace_time=None so
that a late job still runs (the default, 1 s, would silently skip it). Lateness is measured when the
job function starts, against its run_date.
"""

import gc
import json
import resource
import sys
import threading
import time
from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler


def cpu_s():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def status_field(name, path="/proc/self/status"):
    with open(path) as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return -1


def rss_bytes():
    return status_field("VmRSS") * 1024


def percentile(sorted_values, p):
    k = max(1, min(len(sorted_values), int(-(-len(sorted_values) * p // 1))))
    return sorted_values[k - 1]


def make_scheduler():
    return BackgroundScheduler(timezone=timezone.utc,
                               job_defaults={"misfire_grace_time": None, "coalesce": False})


def dispatch(n, spread_ms, margin_ms):
    launched = [0] * n
    done = threading.Event()
    lock = threading.Lock()
    state = {"count": 0}

    def job(i):
        launched[i] = time.time_ns()
        with lock:
            state["count"] += 1
            if state["count"] == n:
                done.set()

    wall0 = time.monotonic()
    cpu0 = cpu_s()
    sched = make_scheduler()
    base = time.time_ns() // 1_000_000 + margin_ms
    earliest = [base + i * spread_ms // n for i in range(n)]
    for i in range(n):
        sched.add_job(job, "date", run_date=datetime.fromtimestamp(earliest[i] / 1000, timezone.utc), args=(i,))
    sched.start()
    cpu_submitted = cpu_s()
    overran = time.time_ns() // 1_000_000 > base
    done.wait()
    sched.shutdown(wait=True)
    cpu1 = cpu_s()
    wall1 = time.monotonic()

    late = sorted(launched[i] - earliest[i] * 1_000_000 for i in range(n))
    print(json.dumps({
        "impl": "apscheduler", "bench": "dispatch", "n": n, "launched": state["count"],
        "spread_s": spread_ms / 1000, "cpu_s": cpu1 - cpu0, "cpu_submit_s": cpu_submitted - cpu0,
        "cpu_dispatch_s": cpu1 - cpu_submitted, "wall_s": wall1 - wall0,
        "dispatch_wall_s": (max(launched) - base * 1_000_000) / 1e9, "rate_per_s": n / (spread_ms / 1000),
        "lateness_p50_ms": percentile(late, 0.5) / 1e6, "lateness_p99_ms": percentile(late, 0.99) / 1e6,
        "lateness_max_ms": late[-1] / 1e6, "lateness_min_ms": late[0] / 1e6,
        "early_launches": sum(1 for v in late if v < 0), "setup_overran": overran,
        "version": apscheduler_version(),
    }), flush=True)


def memory(n):
    def job():
        pass

    sched = make_scheduler()
    sched.start()
    gc.collect()
    rss0 = rss_bytes()
    cpu0 = cpu_s()
    run_date = datetime.fromtimestamp(time.time() + 86400, timezone.utc)
    for _ in range(n):
        sched.add_job(job, "date", run_date=run_date)
    time.sleep(0.3)
    gc.collect()
    rss1 = rss_bytes()
    cpu1 = cpu_s()
    pending = len(sched.get_jobs())
    sched.shutdown(wait=False)
    print(json.dumps({
        "impl": "apscheduler", "bench": "memory", "n": n, "pending": pending, "rss_baseline_bytes": rss0,
        "pending_bytes_per_request": (rss1 - rss0) / n, "total_bytes_per_request": (rss1 - rss0) / n,
        "cpu_submit_s": cpu1 - cpu0, "version": apscheduler_version(),
    }), flush=True)


def idle(n, seconds):
    def job():
        pass

    sched = make_scheduler()
    run_date = datetime.fromtimestamp(time.time() + 86400, timezone.utc)
    for _ in range(n):
        sched.add_job(job, "date", run_date=run_date)
    sched.start()
    time.sleep(1)
    # The scheduler loop runs on its own thread: find it, then count its switches.
    me = threading.get_native_id()
    tid = next(t.native_id for t in threading.enumerate() if t.native_id != me)
    path = f"/proc/self/task/{tid}/status"
    vol0, invol0 = status_field("voluntary_ctxt_switches", path), status_field("nonvoluntary_ctxt_switches", path)
    u0, cpu0 = resource.getrusage(resource.RUSAGE_SELF), cpu_s()
    time.sleep(seconds)
    u1, cpu1 = resource.getrusage(resource.RUSAGE_SELF), cpu_s()
    vol1, invol1 = status_field("voluntary_ctxt_switches", path), status_field("nonvoluntary_ctxt_switches", path)
    threads = status_field("Threads")
    sched.shutdown(wait=False)
    print(json.dumps({
        "impl": "apscheduler", "bench": "idle", "n": n, "seconds": seconds, "threads": threads,
        "loop_voluntary_switches": vol1 - vol0, "loop_nonvoluntary_switches": invol1 - invol0,
        "process_voluntary_switches": u1.ru_nvcsw - u0.ru_nvcsw, "cpu_s": cpu1 - cpu0,
        "version": apscheduler_version(),
    }), flush=True)


def apscheduler_version():
    from importlib.metadata import version
    return version("apscheduler")


if __name__ == "__main__":
    mode, args = sys.argv[1], [int(a) for a in sys.argv[2:]]
    {"dispatch": dispatch, "memory": memory, "idle": idle}[mode](*args)
