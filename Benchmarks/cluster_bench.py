#!/usr/bin/env python3
"""Issue 24 with real `refreshd run` processes (Scripts/bench --only cluster).

launches: J /bin/true jobs, each due every second, run for T seconds by 1 or 3 nodes on a private
  PostgreSQL (`--store`), or by one machine on SQLite beside it; from the runs each store recorded
  in the measured window: durable launches per second and lateness (started - earliest) p50/p99.
takeover: K independent 3-node clusters (a database each, same server) side by side, the default
  10 s lease; in each, M times: SIGKILL of the node leading the most shards, then the time until
  every shard it led is leased by another node (database time, polled every 100 ms); the killed
  node is started again and the next kill follows. Prints p50/p99/max over K x M kills.
instances: N instances of one template added through one of 3 nodes (16 shards), as an operator
  does (`ctl instance add TEMPLATE --keys-from FILE`): the time until every instance is in its
  shard, and each node's resident memory before and after against the instances its shards hold.
One JSON line per measurement on stdout.
"""
import json, os, resource, shutil, signal, sqlite3, subprocess, sys, threading, time


def psql(host, db, sql):
    out = subprocess.run(["psql", "-h", host, "-U", "refreshd", "-d", db, "-At", "-F", " ", "-c", sql],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"psql {sql}: {out.stderr.strip()}")
    return [line.split(" ") for line in out.stdout.splitlines() if line]


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else None


def write_jobs(directory, count, program="/bin/true", every="00/1"):
    os.makedirs(directory, exist_ok=True)
    for i in range(count):
        with open(os.path.join(directory, f"job{i:05d}.yaml"), "w") as f:
            f.write(f"""identifier: bench.cluster.job{i}
kind: processing
namespace: bench-{i}
command: ["{program}"]
resubmit: {{calendar: "*:*:{every}"}}
missed: skip
allowance: 30s
""")


def start(refreshd, arguments, log):
    return subprocess.Popen([refreshd, "run"] + arguments, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def stop(processes):
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def launches(refreshd, host, work, store, nodes, jobs, seconds, warmup):
    base = os.path.join(work, f"launches-{store}-{nodes}")
    shutil.rmtree(base, ignore_errors=True)
    write_jobs(base + "/jobs", jobs)
    processes = []
    try:
        if store == "postgres":
            db = f"launches{nodes}"
            psql(host, "postgres", f"DROP DATABASE IF EXISTS {db}")
            psql(host, "postgres", f"CREATE DATABASE {db}")
            conninfo = f"host={host} dbname={db} user=refreshd"
            for i in range(nodes):
                processes.append(start(refreshd, ["--jobs", base + "/jobs", "--state", f"{base}/state-{i}", "--shared",
                                                  base + "/shared", "--store", conninfo, "--node", f"n{i}",
                                                  "--max-concurrent", "64"], f"{base}/node-{i}.log"))
        else:
            processes.append(start(refreshd, ["--jobs", base + "/jobs", "--state", base + "/state", "--max-concurrent", "64"],
                                   base + "/node.log"))
        time.sleep(warmup)
        t0 = int(time.time() * 1000)
        time.sleep(seconds)
        t1 = int(time.time() * 1000)
        if any(p.poll() is not None for p in processes):
            raise RuntimeError(f"a refreshd of {base} ended early (its log is there)")
        if store == "postgres":
            rows = psql(host, db, f"SELECT started - earliest FROM refreshd.runs WHERE started >= {t0} AND started < {t1}")
            lateness = [int(r[0]) for r in rows]
        else:
            connection = sqlite3.connect(f"file:{base}/state/state.sqlite?mode=ro", uri=True, timeout=30)
            lateness = [r[0] for r in connection.execute(
                "SELECT started - earliest FROM runs WHERE started >= ? AND started < ?", (t0, t1))]
            connection.close()
    finally:
        stop(processes)
    if not lateness:
        raise RuntimeError(f"no launch recorded in {base}")
    print(json.dumps({"impl": "refreshd", "bench": "cluster-launches", "store": store, "nodes": nodes, "jobs": jobs,
                      "seconds": (t1 - t0) / 1000, "launches": len(lateness),
                      "launches_per_s": len(lateness) * 1000 / (t1 - t0),
                      "lateness_p50_ms": percentile(lateness, 0.5), "lateness_p99_ms": percentile(lateness, 0.99),
                      "lateness_max_ms": max(lateness) if lateness else None}), flush=True)


def cluster(refreshd, host, work, index, kills, jobs, out, errors):
    base = os.path.join(work, f"takeover-{index}")
    shutil.rmtree(base, ignore_errors=True)
    write_jobs(base + "/jobs", jobs, every="00/2")
    db = f"takeover{index}"
    nodes = {}
    try:
        psql(host, "postgres", f"DROP DATABASE IF EXISTS {db}")
        psql(host, "postgres", f"CREATE DATABASE {db}")
        conninfo = f"host={host} dbname={db} user=refreshd"

        def launch(name):
            nodes[name] = start(refreshd, ["--jobs", base + "/jobs", "--state", f"{base}/state-{name}", "--shared",
                                           base + "/shared", "--store", conninfo, "--node", name],
                                f"{base}/{name}.log")

        for name in ("a", "b", "c"):
            launch(name)
        def owners():
            try:
                return {int(s): o for s, o in psql(host, db, """
                    SELECT shard, owner FROM refreshd.leases WHERE owner IS NOT NULL AND expires_at > clock_timestamp()""")}
            except RuntimeError:  # the nodes have not created the schema yet
                return {}
        deadline = time.time() + 60
        while len(owners()) < 16 or len(set(owners().values())) < 3:
            if time.time() > deadline:
                raise RuntimeError(f"cluster {index} did not spread over 3 nodes")
            time.sleep(0.5)
        for _ in range(kills):
            held = owners()
            counts = {}
            for shard, owner in held.items():
                counts.setdefault(owner, []).append(shard)
            victim = max(counts, key=lambda o: len(counts[o]))
            shards = ",".join(str(s) for s in counts[victim])
            t0 = time.monotonic()
            nodes[victim].kill()
            nodes[victim].wait()
            while True:
                left = psql(host, db, f"""SELECT count(*) FROM refreshd.leases WHERE shard IN ({shards})
                    AND (owner IS NULL OR owner = '{victim}' OR expires_at <= clock_timestamp())""")
                if int(left[0][0]) == 0:
                    break
                if time.monotonic() - t0 > 60:
                    raise RuntimeError(f"cluster {index}: shards of {victim} not taken over in 60 s")
                time.sleep(0.1)
            out.append(time.monotonic() - t0)
            launch(victim)
            time.sleep(2)  # the restarted node heartbeats before the next kill
    except Exception as error:  # reported by the caller
        errors.append(str(error))
    finally:
        stop(list(nodes.values()))


def takeover(refreshd, host, work, clusters, kills, jobs):
    times, errors = [], []
    threads = [threading.Thread(target=cluster, args=(refreshd, host, work, i, kills, jobs, times, errors))
               for i in range(clusters)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    print(json.dumps({"impl": "refreshd", "bench": "cluster-takeover", "lease_s": 10, "clusters": clusters,
                      "kills": len(times), "wall_s": time.monotonic() - t0,
                      "takeover_p50_s": percentile(times, 0.5), "takeover_p99_s": percentile(times, 0.99),
                      "takeover_max_s": max(times)}), flush=True)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """User + system CPU of one process so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def postgres_cpu():
    """CPU of every PostgreSQL process now alive, plus what its ended children used
    (cutime/cstime of the postmaster): the server's whole cost."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        if name == "postgres":
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    return total


def machine_cpu():
    """Busy CPU seconds of the whole machine (every core) from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    busy = sum(fields) - fields[3] - fields[4]
    return busy / os.sysconf("SC_CLK_TCK")


def instances(refreshd, host, work, count):
    base = os.path.join(work, "instances")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base + "/jobs")
    with open(base + "/jobs/feed.yaml", "w") as f:
        f.write("""identifier: bench.feed
template: true
parameters: [user]
kind: processing
command: ["/bin/true", "{user}"]
earliest: +1d
allowance: 30s
""")
    with open(base + "/keys.txt", "w") as f:
        f.writelines(f"user{i:07d}\n" for i in range(count))
    db = "instances"
    psql(host, "postgres", f"DROP DATABASE IF EXISTS {db}")
    psql(host, "postgres", f"CREATE DATABASE {db}")
    conninfo = f"host={host} dbname={db} user=refreshd"
    processes = []
    try:
        for i in range(3):
            processes.append(start(refreshd, ["--jobs", base + "/jobs", "--state", f"{base}/state-{i}", "--shared",
                                              base + "/shared", "--store", conninfo, "--node", f"n{i}"], f"{base}/node-{i}.log"))
        # Every shard led before the add, and the nodes' memory settled.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                led = psql(host, db, "SELECT count(*) FROM refreshd.leases WHERE owner IS NOT NULL AND expires_at > clock_timestamp()")
                if int(led[0][0]) == 16:
                    break
            except RuntimeError:
                pass
            time.sleep(0.2)
        time.sleep(3)
        before = [rss_bytes(p.pid) for p in processes]
        # Where the time goes: each process's CPU over the add (nodes, the ctl, the server, the
        # whole machine): a pipeline that waits shows as CPU far below the wall time.
        cpu_before = [cpu_seconds(p.pid) for p in processes]
        pg_before, machine_before = postgres_cpu(), machine_cpu()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        children_before = usage.ru_utime + usage.ru_stime
        t0 = time.monotonic()
        ctl = subprocess.Popen([refreshd, "ctl", "instance", "add", "bench.feed", "--keys-from", base + "/keys.txt",
                                "--state", base + "/state-0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = ctl.communicate(timeout=1800)
        # The ctl is the only child reaped between the two readings.
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        ctl_cpu = round(children.ru_utime + children.ru_stime - children_before, 2)
        if ctl.returncode != 0:
            raise RuntimeError(f"ctl instance add: {out[-500:]} {err[-500:]}")
        sent = time.monotonic() - t0
        while True:
            stored = int(psql(host, db, "SELECT count(*) FROM refreshd.instances")[0][0])
            if stored >= count or time.monotonic() - t0 > 1800:
                break
            time.sleep(0.1)
        took = time.monotonic() - t0
        cpu = [round(cpu_seconds(p.pid) - b, 2) for p, b in zip(processes, cpu_before)]
        pg_cpu, machine = round(postgres_cpu() - pg_before, 2), round(machine_cpu() - machine_before, 2)
        time.sleep(2)
        after = [rss_bytes(p.pid) for p in processes]
        owners = dict(psql(host, db, "SELECT shard, owner FROM refreshd.leases"))
        per_shard = dict(psql(host, db, "SELECT shard, count(*) FROM refreshd.instances GROUP BY shard"))
        held = [sum(int(n) for shard, n in per_shard.items() if owners.get(shard) == f"n{i}") for i in range(3)]
        if any(p.poll() is not None for p in processes):
            raise RuntimeError(f"a node of {base} ended early (its log is there)")
    finally:
        stop(processes)
    per_instance = [round((a - b) / h) if h else None for a, b, h in zip(after, before, held)]
    print(json.dumps({"impl": "refreshd", "bench": "cluster-instances", "nodes": 3, "shards": 16, "instances": count,
                      "stored": stored, "ctl_s": round(sent, 2), "all_stored_s": round(took, 2),
                      "instances_per_node": held, "rss_before_mb": [round(b / 1e6, 1) for b in before],
                      "rss_after_mb": [round(a / 1e6, 1) for a in after], "bytes_per_instance": per_instance,
                      "cpu_s": {"nodes": cpu, "ctl": ctl_cpu, "postgres": pg_cpu, "machine": machine,
                                "cores": os.cpu_count()}}), flush=True)


if __name__ == "__main__":
    refreshd, host, work, mode = sys.argv[1:5]
    if mode == "launches":
        store, nodes, jobs, seconds, warmup = sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9])
        launches(refreshd, host, work, store, nodes, jobs, seconds, warmup)
    elif mode == "instances":
        instances(refreshd, host, work, int(sys.argv[5]))
    else:
        clusters, kills, jobs = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
        takeover(refreshd, host, work, clusters, kills, jobs)
