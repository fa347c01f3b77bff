#!/usr/bin/env python3
"""Measures a rendered overlap-row figure against the statistics. Usage: /usr/bin/python3 pixel_truth.py path/to/exposure-cli TRACE...  (needs python3-pil)
For each trace and width: `render --rows overlap --no-legend --palette default`, classify pixels by the default
palette's overlap-state colours, find the rows, and compare each row's area share per state with stats --json over the
same window (the render is given the stats window: --from/--to). Pass: every |pixel share - time share| <= max(1 pp, 10 % of the time share).
The waiting for peers is a state of its own in overlap rows (exposed: "waiting", hidden: "hidden_waiting"): its
truth is the rank's exposed_wait_ns and wait_ns - exposed_wait_ns (whole trace: waiting lies inside the GPU activity
that the default window covers), taken out of exposed and hidden. (The copy in ../shared/tools predates the waiting
states.)"""
import json, os, subprocess, sys, tempfile
from PIL import Image

STATES = {"exposed": (213, 94, 0), "hidden": (0, 158, 115), "compute": (156, 200, 232), "idle": (221, 221, 221),
          "waiting": (231, 41, 138), "hidden_waiting": (166, 219, 160)}
cli, traces = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp(prefix="pixtruth_")

def classify(p):
    best, bd = None, 45 ** 2
    for k, c in STATES.items():
        d = sum((a - b) ** 2 for a, b in zip(p, c))
        if d < bd: best, bd = k, d
    return best

worst, fails, n = 0.0, [], 0
for t in traces:
    st = json.loads(subprocess.run([cli, "stats", "--json", t], capture_output=True, text=True, check=True).stdout)
    w0, w1 = st["window"]["start_ns"], st["window"]["end_ns"]; span = w1 - w0
    def truthOf(r):
        c = r.get("collectives", {})
        ew = c.get("exposed_wait_ns", 0); hw = max(0, c.get("wait_ns", 0) - ew)
        return {"exposed": (r["exposed_ns"] - ew) / span, "hidden": (r["overlapped_ns"] - hw) / span,
                "compute": (r["compute_busy_ns"] - r["overlapped_ns"]) / span, "waiting": ew / span,
                "hidden_waiting": hw / span}
    truth = [truthOf(r) for r in st["ranks"]]
    for width in (600, 1000, 2000, 4000):
        out = os.path.join(tmp, f"{os.path.basename(t)}_{width}.png")
        h = 70 * len(truth) + 60
        p = subprocess.run([cli, "render", t, "--rows", "overlap", "--no-legend", "--palette", "default",
                            "--width", str(width), "--height", str(h), "-o", out, "--force",
                            "--from", f"{w0}ns", "--to", f"{w1}ns"], capture_output=True, text=True)
        if p.returncode != 0: fails.append(f"{os.path.basename(t)} {width}px: render failed {p.stderr[-150:]}"); continue
        im = Image.open(out).convert("RGB"); W, H = im.size; px = im.load()
        cls = [[classify(px[x, y]) for x in range(W)] for y in range(H)]
        # rows: y-runs where most columns are state-coloured
        ys = [y for y in range(H) if sum(1 for x in range(W) if cls[y][x]) >= 0.5 * W]
        bands, cur = [], []
        for y in ys:
            if cur and y != cur[-1] + 1: bands.append(cur); cur = []
            cur.append(y)
        if cur: bands.append(cur)
        bands = [b for b in bands if len(b) >= 4]
        if len(bands) != len(truth): fails.append(f"{os.path.basename(t)} {width}px: found {len(bands)} rows, want {len(truth)}"); continue
        cols = [x for x in range(W) if sum(1 for b in bands for y in b if cls[y][x]) >= 0.5 * sum(len(b) for b in bands)]
        xa, xb = min(cols), max(cols) + 1
        for ri, (b, tr) in enumerate(zip(bands, truth)):
            area = len(b) * (xb - xa)
            for k in ("exposed", "hidden", "compute", "waiting", "hidden_waiting"):
                share = sum(1 for y in b for x in range(xa, xb) if cls[y][x] == k) / area
                err = abs(share - tr[k]); tol = max(0.01, 0.1 * tr[k]); n += 1
                worst = max(worst, err * 100)
                if err > tol:
                    fails.append(f"{os.path.basename(t)} {width}px rank {ri} {k}: painted {share*100:.1f} % vs time {tr[k]*100:.1f} %")
for f in fails[:12]: print(f)
print(f"pixel truth: {n - len([f for f in fails if 'painted' in f])}/{n} row-state shares within tolerance, worst error {worst:.1f} pp"
      + (f"; {len(fails)} failures" if fails else ""))
sys.exit(1 if fails else 0)
