"""Every batch that ran in a sweep, under the sweep's cap, predicted from the base recording
against the real run's peaks (max_memory_allocated, max_memory_reserved): the what-if at batches
other than the changed rows' x2 and x1/2.

    python3 compare_sweep_points.py MEMSCOPE_BINARY [--jobs N] [--only MODEL,MODEL]

Prints a line a point, then the points within 5% allocated and 8% reserved. A point the replay
predicts out of memory has no allocated peak to compare (its peak is where it stopped).
"""
import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = sys.argv[1]
JOBS = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else os.cpu_count()
ONLY = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None

points = []
for path in sorted(glob.glob(os.path.join(HERE, "truth*.json"))):
    for s in json.load(open(path)).get("sweeps", []):
        base = os.path.join(HERE, "whatif_%s_base.pickle.gz" % s["model"])
        if not os.path.exists(base) or (ONLY and s["model"] not in ONLY):
            continue
        for r in s["runs"]:
            if r["ok"]:
                points.append((s, r, base))


def predict(point):
    s, r, base = point
    cmd = [BINARY, "whatif", base, "--recorded-batch", str(s["recorded_batch"]), "--batch", str(r["batch"]),
           "--capacity", str(s["cap_bytes"]), "--json"] + (["--checkpoint", "all"] if s["variant"] == "ckpt_all" else [])
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


within = oom = 0
with ThreadPoolExecutor(JOBS) as pool:
    for (s, r, _), d in zip(points, pool.map(predict, points)):
        ea = d["allocated_peak_bytes"] / r["max_allocated"] - 1
        er = d["reserved_peak_bytes"] / r["max_reserved"] - 1
        if d["oom"]:
            oom += 1
        ok = not d["oom"] and abs(ea) <= 0.05 and abs(er) <= 0.08
        within += ok
        print("%-12s %-8s batch %4d  allocated %+6.1f%%  reserved %+6.1f%%%s" % (
            s["model"], s["variant"], r["batch"], 100 * ea, 100 * er, "  (predicted out of memory)" if d["oom"] else ""))
print("%d of %d points within 5%% allocated and 8%% reserved; %d predicted out of memory where the run fit" % (
    within, len(points), oom))
