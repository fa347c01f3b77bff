#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds an N-rank torch.profiler run from a real 2-rank pair: rank r is a copy of source file r % 2 renumbered into
rank r of world N, exactly as `../shared/tools/kineto_transform.py renumber IN OUT r N "[0, 1, ..., N-1]"` does:

- distributedInfo: rank = r, world_size = N; each pg_config entry: ranks = [0 .. N-1], pg_size = N;
- every "Process Group Ranks" argument = "[0, 1, ..., N-1]" (a string);
- every integer "Rank" argument = r;
- kernel, gpu_memcpy and gpu_memset events that carry args.device: args.device = r and pid = r.

The tool parses and rewrites each file (about 20 s for one 23 MB rank); this script edits the text instead. Each
source is cut once into constant pieces and the places that depend on the rank; a rank's file is then the pieces
joined with its values, so a copy costs a join and a write (and gzip's deflate for .json.gz). Numbers, spacing and
key order stay as in the source, which the tool does not keep (it writes compact JSON); the importer reads both the
same way (`--check` compares this script's output with the tool's through `exposure-cli stats --json`).

usage: make_kineto_ranks.py SRC0 SRC1 OUTDIR [--ranks N] [--jobs J] [--format gz|json] [--level L]
"""
import argparse
import gzip
import os
import re
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor

RANK, WORLD, RANKS_JSON, RANKS_STR = range(4)  # what a slot holds

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def read_text(path):
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        return f.read().decode("utf-8")


class Template:
    """A source file as constant pieces and slots: text = pieces[0] + value(slots[0]) + pieces[1] + ..."""

    def __init__(self, text):
        self.pieces, self.slots = [], []
        edits = []  # (start, end, slot kind)
        self._distributed_info(text, edits)
        for m in re.finditer(r'"Process Group Ranks": ("(?:[^"\\]|\\.)*")', text):
            edits.append((m.start(1), m.end(1), RANKS_STR))
        for m in re.finditer(r'"Rank": (-?[0-9]+)(?=[,\s}])', text):
            edits.append((m.start(1), m.end(1), RANK))
        self._gpu_events(text, edits)
        edits.sort()
        pos = 0
        for start, end, kind in edits:
            if start < pos:
                sys.exit("make_kineto_ranks: overlapping edits at byte %d" % start)
            self.pieces.append(text[pos:start])
            self.slots.append(kind)
            pos = end
        self.pieces.append(text[pos:])

    @staticmethod
    def _distributed_info(text, edits):
        m = re.search(r'"distributedInfo": \{', text)
        if not m:
            sys.exit("make_kineto_ranks: no distributedInfo in the source")
        end = text.index("\n", m.end())  # torch.profiler writes the object on one line
        line = text[m.end():end]
        base = m.end()
        for key, kind in (("rank", RANK), ("world_size", WORLD), ("pg_size", WORLD)):
            for k in re.finditer(r'"%s": (-?[0-9]+)' % key, line):
                edits.append((base + k.start(1), base + k.end(1), kind))
        for k in re.finditer(r'"ranks": (\[[0-9, ]*\])', line):
            edits.append((base + k.start(1), base + k.end(1), RANKS_JSON))

    @staticmethod
    def _gpu_events(text, edits):
        # An event of the trace starts with "\n  {" and ends with "\n  }" (torch.profiler's layout); the top-level
        # "pid" comes before "args", args.device inside it.
        cat = re.compile(r'"cat": "(%s)"' % "|".join(GPU_CATS))
        for m in cat.finditer(text):
            start = text.rfind("\n  {", 0, m.start())
            end = text.find("\n  }", m.end())
            event = text[start:end]
            args = event.find('"args": {')
            if args < 0:
                continue
            device = re.search(r'"device": (-?[0-9]+)', event[args:])
            if not device:
                continue
            pid = re.search(r'"pid": (-?[0-9]+|"[^"]*")', event[:args])
            if not pid:
                sys.exit("make_kineto_ranks: a GPU event without a pid at byte %d" % start)
            edits.append((start + pid.start(1), start + pid.end(1), RANK))
            at = start + args + device.start(1)
            edits.append((at, at + len(device.group(1)), RANK))

    def render(self, rank, world):
        ranks_json = "[" + ", ".join(str(i) for i in range(world)) + "]"
        values = {RANK: str(rank), WORLD: str(world), RANKS_JSON: ranks_json, RANKS_STR: '"' + ranks_json + '"'}
        out = [self.pieces[0]]
        for kind, piece in zip(self.slots, self.pieces[1:]):
            out.append(values[kind])
            out.append(piece)
        return "".join(out).encode("utf-8")


def write_rank(templates, outdir, rank, world, fmt, level):
    data = templates[rank % len(templates)].render(rank, world)
    name = os.path.join(outdir, "rank%d.json" % rank)
    if fmt == "gz":
        name += ".gz"
        # zlib releases the GIL while it deflates, so threads compress in parallel.
        comp = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        data = comp.compress(data) + comp.flush()
    tmp = name + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, name)
    return len(data)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", nargs="+", help="the source ranks (rank r is a copy of source r %% count)")
    p.add_argument("outdir")
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--format", choices=("gz", "json"), default="gz")
    p.add_argument("--level", type=int, default=1, help="gzip level (default 1: fast)")
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    templates = [Template(read_text(s)) for s in a.sources]
    for s, t in zip(a.sources, templates):
        print("%s: %d places renumbered" % (s, len(t.slots)), file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        sizes = list(pool.map(lambda r: write_rank(templates, a.outdir, r, a.ranks, a.format, a.level),
                              range(a.ranks)))
    print("%d files, %.2f GB in %s" % (len(sizes), sum(sizes) / 1e9, a.outdir), file=sys.stderr)


if __name__ == "__main__":
    main()
