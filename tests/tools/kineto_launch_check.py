#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent check of launch pairing on torch.profiler (Kineto) traces, written without Exposure's code.

For each file: the ProfilerStep#N windows (CPU user annotations), every kernel's launch call found by its
correlation id, and per step the kernels whose launch call began inside the step (a kernel without a launch call
falls in the step that holds its own start). Then the idle split of the rank's GPU activity: for every gap between
GPU work (kernels, copies, memsets on all streams), the work that starts at the gap's end and its launch call: the
gap until that call ended is "before", the rest "after" (queued); gaps ending in work without a call are
"unattributed".

Usage: kineto_launch_check.py FILE.json[.gz]...   (prints one block per file)
"""
import bisect
import collections
import gzip
import json
import re
import sys


# Kernel names that Exposure's default rules (resources/rules.json, rule "memcpy") class as copies, not kernels:
# e.g. the driver's memcpy32_post / memset32 kernels inside CUDA graphs.
COPY_NAME = re.compile(r"memcpy|memset|^(?:memory )?copy (?:HtoD|DtoH|DtoD|HtoH|PtoP)", re.I)


def ns(v):
    # Microsecond floats as written by Kineto -> integer ns, the way a decimal reader rounds (nearest).
    return int(round(float(v) * 1000.0))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main(paths):
    for path in paths:
        doc = load(path)
        events = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]
        steps = sorted(
            (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"])
            for e in events
            if e.get("cat") == "user_annotation" and re.match(r"ProfilerStep#\d+", e.get("name", ""))
        )
        calls = {}
        for e in events:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
                calls[e["args"]["correlation"]] = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"])
        gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        starts = [s[0] for s in steps]

        def step_at(t):
            k = bisect.bisect_right(starts, t) - 1
            return k if k >= 0 and t < steps[k][1] else -1

        per_step = collections.Counter()
        per_step_rules = collections.Counter()  # without the kernels Exposure's default rules class as copies
        per_call = collections.Counter()
        graph_calls = set()
        no_call = 0
        for e in gpu:
            if e["cat"] != "kernel":
                continue
            corr = e.get("args", {}).get("correlation")
            call = calls.get(corr)
            if call is None:
                no_call += 1
                k = step_at(ns(e["ts"]))
                per_step[k] += 1
                per_step_rules[k] += 0 if COPY_NAME.search(e["name"]) else 1
                continue
            per_call[corr] += 1
            if "GraphLaunch" in call[2]:
                graph_calls.add(corr)
            per_step[step_at(call[0])] += 1
            per_step_rules[step_at(call[0])] += 0 if COPY_NAME.search(e["name"]) else 1
        hist = collections.Counter(per_call.values())
        print(path)
        print("  kernels %d, with a launch call %d, without %d" % (
            sum(1 for e in gpu if e["cat"] == "kernel"), sum(per_call.values()), no_call))
        print("  kernels per call: " + ", ".join("%d: %d" % (k, hist[k]) for k in sorted(hist)))
        print("  graph launches %d starting %d kernels" % (
            len(graph_calls), sum(per_call[c] for c in graph_calls)))
        for k, (s, e, name) in enumerate(steps):
            print("  step %d %s: %d kernels (%d without copy-named kernels)" % (k, name, per_step[k], per_step_rules[k]))
        if per_step[-1]:
            print("  outside every step: %d kernels" % per_step[-1])

        # Idle split over the whole trace.
        work = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e.get("args", {}).get("correlation")) for e in gpu)
        before = after = unattributed = 0
        busy_end = None
        i = 0
        while i < len(work):
            s = work[i][0]
            # every piece of work starting at s (the first one with a known call decides, as in the tool)
            group = []
            while i < len(work) and work[i][0] == s:
                group.append(work[i])
                i += 1
            if busy_end is not None and s > busy_end:
                gap = s - busy_end
                call = next((calls[w[2]] for w in group if w[2] in calls), None)
                if call is None:
                    unattributed += gap
                else:
                    host = min(max(call[1] - busy_end, 0), gap)
                    before += host
                    after += gap - host
            end = max(w[1] for w in group)
            busy_end = end if busy_end is None else max(busy_end, end)
        total = before + after + unattributed
        pct = lambda v: 100.0 * v / total if total else 0.0
        print("  idle %d ns: before the call ended %d (%.1f %%), after (queued) %d (%.1f %%), unattributed %d (%.1f %%)"
              % (total, before, pct(before), after, pct(after), unattributed, pct(unattributed)))


if __name__ == "__main__":
    main(sys.argv[1:])
