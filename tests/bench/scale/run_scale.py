#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The 1 024-rank torch.profiler recipe (README.md beside this file): builds the set from the real 2-rank pair, then
measures `exposure-cli stats --json`, `exposure-cli info` and `mpirun -n K exposure-mpi stats --json` on it (wall,
CPU = user + system of every process, cores busy = CPU / wall, peak RSS of the largest process), checks that every
stats output is byte-identical to the first one, and prints a Markdown table.

usage: run_scale.py --bin DIR --sources SRC0 SRC1 --work DIR [--ranks 1024] [--procs 1,4,16] [--formats gz,json]
                    [--mpirun "mpirun --allow-run-as-root"] [--skip-gzip] [--keep]

DIR of --bin holds exposure-cli and (optional) exposure-mpi. Without mpirun on the PATH (or --mpirun) the
exposure-mpi rows say so. EXPOSURE_TIMINGS=1 is set for every run, so each run's stages are printed on stderr."""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(label, cmd, stdout, results):
    """One measured run through measure.py; returns its row (None if measure.py failed to run)."""
    tmp = results + ".one"
    if os.path.exists(tmp):
        os.remove(tmp)
    status = subprocess.call([sys.executable, os.path.join(HERE, "measure.py"), "--label", label, "--stdout", stdout,
                              "--json", tmp, "--"] + cmd)
    if not os.path.exists(tmp):
        return None
    with open(tmp) as f:
        row = json.loads(f.read())
    with open(results, "a") as f:
        f.write(json.dumps(row) + "\n")
    if status != 0:
        print("run_scale: %s exited with status %d" % (label, status), file=sys.stderr)
    return row


def generate(a, fmt):
    out = os.path.join(a.work, "ranks%d-%s" % (a.ranks, fmt))
    pattern = os.path.join(out, "rank*.json" + (".gz" if fmt == "gz" else ""))
    if len(glob.glob(pattern)) == a.ranks:
        print("run_scale: %s exists (%d files)" % (out, a.ranks), file=sys.stderr)
        return out
    start = time.monotonic()
    subprocess.check_call([sys.executable, os.path.join(HERE, "make_kineto_ranks.py")] + a.sources
                          + [out, "--ranks", str(a.ranks), "--format", fmt])
    print("run_scale: generated %s in %.1f s" % (out, time.monotonic() - start), file=sys.stderr)
    return out


def set_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def table(rows):
    lines = ["| command | wall | CPU (user + sys) | cores busy | peak RSS |", "|---|---|---|---|---|"]
    for r in rows:
        if r is None:
            continue
        if r.get("status") is None:
            lines.append("| `%s` | MPI not available here | | | |" % r["label"])
            continue
        note = "" if r["status"] == 0 else " (exit status %d)" % r["status"]
        if "identical" in r:
            note += ", output %s" % ("byte-identical" if r["identical"] else "DIFFERS from exposure-cli's")
        lines.append("| `%s`%s | %.1f s | %.1f s | %.1f | %.2f GB |"
                     % (r["label"], note, r["wall_s"], r["cpu_s"], r["cores"], r["peak_rss_mib"] * 1024 * 1024 / 1e9))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--sources", nargs="+", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--procs", default="1,4,16")
    p.add_argument("--formats", default="gz")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--skip-gzip", action="store_true", help="no gzip -dc baseline")
    p.add_argument("--skip-info", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the generated sets")
    p.add_argument("--out", help="folder for results.jsonl and table.md (default: --work), rewritten after each run")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.environ["EXPOSURE_TIMINGS"] = "1"
    out_dir = a.out or a.work
    os.makedirs(out_dir, exist_ok=True)
    results = os.path.join(out_dir, "results.jsonl")
    cli = os.path.join(a.bin, "exposure-cli")
    mpi = os.path.join(a.bin, "exposure-mpi")
    mpirun = shlex.split(a.mpirun)
    have_mpi = os.path.exists(mpi) and shutil.which(mpirun[0]) is not None
    rows = []

    def add(row):  # the table so far is rewritten after each run, so that a run cut short leaves its rows
        rows.append(row)
        with open(os.path.join(out_dir, "table.md"), "w") as f:
            f.write(table(rows) + "\n")

    for fmt in a.formats.split(","):
        folder = generate(a, fmt)
        print("run_scale: %s: %.2f GB" % (folder, set_bytes(folder) / 1e9), file=sys.stderr)
        files = sorted(glob.glob(os.path.join(folder, "rank*")))
        tag = "%d ranks, .%s" % (a.ranks, "json.gz" if fmt == "gz" else "json")
        if fmt == "gz" and not a.skip_gzip:
            add(measure("gzip -dc of all files, one process (%s)" % tag,
                                ["sh", "-c", 'cat "$@" | gzip -dc', "sh"] + files, os.devnull, results))
        first = os.path.join(a.work, "stats-cli-%s.json" % fmt)
        add(measure("exposure-cli stats --json (%s)" % tag, [cli, "stats", "--json", folder], first, results))
        if not a.skip_info:
            add(measure("exposure-cli info (%s)" % tag, [cli, "info", folder], os.devnull, results))
        for k in [int(x) for x in a.procs.split(",") if x]:
            label = "mpirun -n %d exposure-mpi stats --json (%s)" % (k, tag)
            if not have_mpi:
                add({"label": label, "status": None})
                continue
            out = os.path.join(a.work, "stats-mpi%d-%s.json" % (k, fmt))
            row = measure(label, mpirun + ["-n", str(k), mpi, "stats", "--json", folder], out, results)
            if row:
                with open(first, "rb") as f1, open(out, "rb") as f2:
                    row["identical"] = f1.read() == f2.read()
                print("run_scale: %s: output %s" % (label, "byte-identical" if row["identical"] else "DIFFERS"),
                      file=sys.stderr)
            add(row)
        if not a.keep:
            shutil.rmtree(folder)
    print("\n" + table(rows))


if __name__ == "__main__":
    main()
