#!/usr/bin/env python3
"""Generate cron-croniter.json: reference next-elapse instants for 5-field cron expressions.

Run once by hand (pip install croniter) and commit the JSON; the Swift tests only read it:
    python3 Tests/RefreshdCalendarTests/Fixtures/make-cron-fixtures.py
Each case: expression, IANA zone, base instant (UTC), the next 5 instants (UTC) per croniter,
and `transitions`: UTC offset changes of the zone between the base and the last instant.
Deterministic: a fixed seed, fixed zones and base years.
"""
import json
import os
import random
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from croniter import croniter

SEED = 20261121
COUNT = 400
ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Tokyo", "Europe/Berlin"]
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


def field(rng, lo, hi, names=None, star=0.4):
    if rng.random() < star:
        return "*"
    items = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.randint(0, 6)
        a = rng.randint(lo, hi)
        name = lambda v: names[v - (1 if names is MONTHS else 0)] if names and rng.random() < 0.3 else str(v)
        if kind == 0:
            items.append("*/" + str(rng.randint(2, max(2, (hi - lo) // 2))))
        elif kind == 1 and a < hi:
            items.append(name(a) + "-" + name(rng.randint(a + 1, hi)))
        elif kind == 2 and a < hi:
            items.append(str(a) + "-" + str(rng.randint(a + 1, hi)) + "/" + str(rng.randint(2, 4)))
        else:
            items.append(name(a))
    return ",".join(items)


def expression(rng):
    if rng.random() < 0.05:
        return rng.choice(["@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually"])
    minute = field(rng, 0, 59, star=0.15)
    hour = field(rng, 0, 23, star=0.35)
    dom = field(rng, 1, 31, star=0.6)
    month = field(rng, 1, 12, MONTHS, star=0.7)
    dow = field(rng, 0, 6, DAYS, star=0.65)
    return " ".join([minute, hour, dom, month, dow])


def transitions(zone, start, end):
    """UTC instants in (start, end] where the zone's UTC offset changes (hourly scan)."""
    found = []
    t = start
    previous = start.astimezone(zone).utcoffset()
    while t < end:
        t = min(t + timedelta(minutes=30), end)
        offset = t.astimezone(zone).utcoffset()
        if offset != previous:
            found.append(t.strftime("%Y-%m-%dT%H:%M:%SZ"))
            previous = offset
    return found


def main():
    rng = random.Random(SEED)
    cases = []
    while len(cases) < COUNT:
        expr = expression(rng)
        zone_name = rng.choice(ZONES)
        zone = ZoneInfo(zone_name)
        base = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=rng.randint(0, 2 * 365 * 86400))
        if rng.random() < 0.4 and zone_name not in ("UTC", "Asia/Tokyo"):
            # Start shortly before one of the zone's 2026 DST changes.
            changes = transitions(zone, datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc))
            change = datetime.strptime(rng.choice(changes), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            base = change - timedelta(seconds=rng.randint(0, 30 * 3600))
        local_base = base.astimezone(zone)
        it = croniter(expr, local_base)
        nexts = [it.get_next(datetime).astimezone(timezone.utc) for _ in range(5)]
        cases.append({
            "expression": expr,
            "zone": zone_name,
            "base": base.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "next": [n.strftime("%Y-%m-%dT%H:%M:%SZ") for n in nexts],
            "transitions": transitions(zone, base, nexts[-1]),
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cron-croniter.json")
    with open(path, "w") as f:
        json.dump({"generator": "make-cron-fixtures.py", "croniter": "7.0.0", "seed": SEED, "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
