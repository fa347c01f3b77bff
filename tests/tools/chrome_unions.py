#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-worker busy times of a Megatron-LM timeline in the Chrome Trace Event Format, computed without Exposure's code.

Usage: python3 tests/tools/chrome_unions.py timeline-ST.json.gz

Reads the JSON (gzip or plain) with Python's json module, numbers as Decimal (the exact text), and converts each X
event to integer nanoseconds as Exposure documents it: start = round(ts * 1000), end = start + round(dur * 1000),
halves rounded away from zero. Workers are (dp, pp, tp): dp is the pid, pp and tp come from the thread name
"PP rank P, TP rank T, LANE". For each worker it prints the Megatron global rank (tp fastest, then dp, then pp),
the number of events, the union of its compute lane's intervals (compute busy), the union of each communication
lane's intervals, the union over all its communication lanes (comm busy) and the number of distinct steps.
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
    count = defaultdict(int)
    for e in events:
        if e.get("ph") != "X":
            continue
        m = pattern.match(names[(e["pid"], e["tid"])])
        worker = (int(e["pid"]), int(m.group(1)), int(m.group(2)))
        start = ns(str(e["ts"]))
        lanes[(worker, m.group(3))].append((start, start + ns(str(e["dur"]))))
        steps[worker].add(e["args"]["step"])
        count[worker] += 1
    workers = sorted(steps)
    dp_size = max(w[0] for w in workers) + 1
    tp_size = max(w[2] for w in workers) + 1
    print("rank dp pp tp events compute_busy pp_comm dp_comm tp_comm comm_busy steps")
    for dp, pp, tp in sorted(workers, key=lambda w: w[2] + tp_size * (w[0] + dp_size * w[1])):
        w = (dp, pp, tp)
        comm = [iv for lane in ("pp-comm", "dp-comm", "tp-comm") for iv in lanes[(w, lane)]]
        print(tp + tp_size * (dp + dp_size * pp), dp, pp, tp, count[w], union(lanes[(w, "compute")]),
              union(lanes[(w, "pp-comm")]), union(lanes[(w, "dp-comm")]), union(lanes[(w, "tp-comm")]),
              union(comm), len(steps[w]))


if __name__ == "__main__":
    main(sys.argv[1])
