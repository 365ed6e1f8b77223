#!/usr/bin/env python3
"""Side-by-side timing of memscope_perf and Python's pickle.load on the same files.

    bench/measure.py --perf build-perf/bench/memscope_perf [--runs 3] FILE[:CHECK.json] ...

For each file, alternating run by run: `memscope_perf FILE --check CHECK` (its JSON: load,
replay, attribution, total; peak RSS from /usr/bin/time) and
`python3 -c "import pickle; pickle.load(open(F,'rb'))"` (wall time of the whole command,
peak RSS). Prints one Markdown row per file with the medians, and the raw runs as JSON
on stderr. Python never reads a file for the product; this is only the yardstick.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (wall seconds, peak RSS KiB, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    rss = int(p.stderr.strip().splitlines()[-1])
    return wall, rss, p.stdout


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default="python3")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    print("| file | events | MB | load s | replay s | attribution s | total s | process s | pickle.load s | ratio | peak RSS MB | RSS / file | check | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for spec in a.files:
        path, _, check = spec.partition(":")
        runs = []
        for _ in range(a.runs):
            cmd = [a.perf, path] + (["--check", check] if check else [])
            wall, rss, out = timed(cmd)
            j = json.loads(out)
            pwall, prss, _ = timed([a.python, "-c", f"import pickle; pickle.load(open({path!r},'rb'))"])
            runs.append({"perf": j, "process_s": wall, "rss_kib": rss, "python_s": pwall, "python_rss_kib": prss,
                         "loadavg": loadavg()})
        print(json.dumps({"file": path, "runs": runs}), file=sys.stderr)
        med = lambda f: statistics.median(f(r) for r in runs)
        size = os.path.getsize(path)
        total = med(lambda r: r["perf"]["total_s"])
        py = med(lambda r: r["python_s"])
        rss = med(lambda r: r["rss_kib"]) * 1024
        checks = {r["perf"].get("check", "-") for r in runs}
        print(f"| {os.path.basename(path)} | {runs[0]['perf']['events']:,} | {size / 1e6:.1f} "
              f"| {med(lambda r: r['perf']['load_s']):.3f} | {med(lambda r: r['perf']['replay_s']):.3f} "
              f"| {med(lambda r: r['perf']['attribution_s']):.3f} | {total:.3f} | {med(lambda r: r['process_s']):.3f} "
              f"| {py:.2f} | {py / total:.1f}x | {rss / 1e6:.0f} | {rss / size:.2f} | {'/'.join(sorted(checks))} "
              f"| {med(lambda r: r['loadavg']):.2f} |", flush=True)


if __name__ == "__main__":
    main()
