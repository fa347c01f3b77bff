#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-worker busy times of a Megatron-LM timeline in the Chrome Trace Event Format, computed without Exposure's code.

Usage: python3 tests/tools/chrome_unions.py timeline-ST.json.gz

Reads the JSON (gzip or plain) with Python's json module, numbers as Decimal (the exact text), and converts each X
event to integer nanoseconds as Exposure documents it: start = round(ts * 1000), end = start + round(dur * 1000),
halves rounded away from zero. Workers are (dp, pp, tp): dp is the pid, pp and tp come from the thread name
"PP rank P, TP rank T, LANE". For each worker it prints the Megatron global rank (tp fastest, then dp, then pp),
the number of events, the union of its compute lane's intervals (compute busy), the union of each communication
lane's intervals, the union over all its communication lanes (comm busy), the number of distinct steps, each
communication role's exposed time (its union less the compute lane's) and the worker's pipeline bubbles: per step, the
job's window of that step (the earliest start to the latest end of that step's ops on any worker) less the worker's
compute busy time inside it, summed over the steps and for the first step.
tests/realdata/tst_megatron_timeline.cpp compares Exposure's numbers with this output.
"""
import gzip
import json
import re
import sys
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal


def ns(text):
    return int((Decimal(text) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def union(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    """|U(a) & U(b)| of two interval lists."""
    a, b, i, j, total = merged(a), merged(b), 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)
    if isinstance(events, dict):
        events = events["traceEvents"]
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    pattern = re.compile(r"^PP rank (\d+), TP rank (\d+), (compute|pp-comm|dp-comm|tp-comm|misc)$")
    lanes = defaultdict(list)  # (dp, pp, tp) -> lane -> intervals
    steps = defaultdict(set)
    step_ops = defaultdict(list)  # (worker, step) -> intervals of every lane
    count = defaultdict(int)
    for e in events:
        if e.get("ph") != "X":
            continue
        m = pattern.match(names[(e["pid"], e["tid"])])
        worker = (int(e["pid"]), int(m.group(1)), int(m.group(2)))
        start = ns(str(e["ts"]))
        lanes[(worker, m.group(3))].append((start, start + ns(str(e["dur"]))))
        steps[worker].add(e["args"]["step"])
        step_ops[(worker, e["args"]["step"])].append((start, start + ns(str(e["dur"]))))
        count[worker] += 1
    workers = sorted(steps)
    dp_size = max(w[0] for w in workers) + 1
    tp_size = max(w[2] for w in workers) + 1
    # The job's window of each step: the earliest start to the latest end of that step's ops on any worker; a
    # worker's bubble in it is the window less its compute busy time inside it.
    job = {}
    for (w, step), ivs in step_ops.items():
        lo, hi = min(s for s, _ in ivs), max(e for _, e in ivs)
        job[step] = (min(lo, job[step][0]), max(hi, job[step][1])) if step in job else (lo, hi)
    print("rank dp pp tp events compute_busy pp_comm dp_comm tp_comm comm_busy steps"
          " pp_exposed dp_exposed bubble_sum first_step_bubble")
    for dp, pp, tp in sorted(workers, key=lambda w: w[2] + tp_size * (w[0] + dp_size * w[1])):
        w = (dp, pp, tp)
        comm = [iv for lane in ("pp-comm", "dp-comm", "tp-comm") for iv in lanes[(w, lane)]]
        compute = lanes[(w, "compute")]
        exposed = {lane: union(lanes[(w, lane)]) - overlap(lanes[(w, lane)], compute) for lane in ("pp-comm", "dp-comm")}
        bubbles = {step: (job[step][1] - job[step][0]) - overlap(compute, [job[step]]) for step in sorted(steps[w])}
        print(tp + tp_size * (dp + dp_size * pp), dp, pp, tp, count[w], union(compute),
              union(lanes[(w, "pp-comm")]), union(lanes[(w, "dp-comm")]), union(lanes[(w, "tp-comm")]),
              union(comm), len(steps[w]), exposed["pp-comm"], exposed["dp-comm"], sum(bubbles.values()),
              bubbles[min(bubbles)])


if __name__ == "__main__":
    main(sys.argv[1])
