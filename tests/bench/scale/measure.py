#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs one command and reports what it cost: wall time, CPU time (user + system, of the command and every process
it waited for: mpirun's ranks count), the cores busy on average (CPU / wall) and the peak resident memory of its
largest process (Linux's ru_maxrss of wait4: the largest of the process and its waited-for descendants).

usage: measure.py [--label TEXT] [--stdout FILE] [--json FILE] -- COMMAND ARGS...

Prints one line on stderr; with --json appends the numbers as one JSON object per line to FILE. The command's
stdout goes to --stdout (default /dev/null), its stderr passes through. Exits with the command's status.
Works where /usr/bin/time is not installed."""
import argparse
import json
import os
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--label", default="")
    p.add_argument("--stdout", default=os.devnull)
    p.add_argument("--json")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command")
    with open(a.stdout, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = ru.ru_utime + ru.ru_stime
    row = {
        "label": a.label or " ".join(cmd),
        "status": proc.returncode,
        "wall_s": round(wall, 3),
        "user_s": round(ru.ru_utime, 3),
        "sys_s": round(ru.ru_stime, 3),
        "cpu_s": round(cpu, 3),
        "cores": round(cpu / wall, 2) if wall > 0 else 0,
        "peak_rss_mib": round(ru.ru_maxrss / 1024, 1),
    }
    print("measure: %(label)s: status %(status)d, wall %(wall_s).2f s, CPU %(cpu_s).1f s (user %(user_s).1f + sys "
          "%(sys_s).1f), %(cores).2f cores busy, peak RSS %(peak_rss_mib).0f MiB" % row, file=sys.stderr, flush=True)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(row) + "\n")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
