"""Batch sweep under a memory cap, each batch in a fresh process, until one runs out of memory.

    python3 record_sweep.py OUTDIR [--cap-gib 6] [--batches 1,2,4,8,16,32,64] [--model qwen]

Runs record_oracle.py NAME MODEL B python OUTDIR --no-labels --cap-gib G for B in --batches,
NAME = sweep_bsB, stopping after the first run whose stats.json says "oom" (that run's
snapshot, with its oom entry, is kept). Writes OUTDIR/sweep.json: the cap, the model and, per
batch, whether it ran or failed, with max_reserved and the requested peak.
"""
import argparse
import json
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--cap-gib", type=float, default=6.0)
ap.add_argument("--batches", default="1,2,4,8,16,32,64")
ap.add_argument("--model", default="qwen")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
runs = []
for b in [int(x) for x in a.batches.split(",")]:
    name = "sweep_bs%d" % b
    cmd = [sys.executable, os.path.join(here, "record_oracle.py"), name, a.model, str(b), "python", a.out,
           "--no-labels", "--cap-gib", str(a.cap_gib)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    print(p.stdout[-2000:], p.stderr[-3000:], flush=True)
    run = {"batch": b, "name": name, "returncode": p.returncode}
    try:
        st = json.load(open(os.path.join(a.out, name + ".stats.json")))
        run.update(ok=not st["oom"], oom=st["oom"], oom_at=st["oom_at"], max_reserved=st["max_reserved"],
                   max_allocated=st["max_allocated"], requested_peak=st["requested_peak"])
    except Exception as e:
        run.update(ok=False, oom=None, error=repr(e), stderr_tail=p.stderr[-600:])
    runs.append(run)
    if not run["ok"]:
        break
json.dump({"model": a.model, "cap_gib": a.cap_gib, "seq": 256, "steps": 3, "runs": runs},
          open(os.path.join(a.out, "sweep.json"), "w"), indent=1)
