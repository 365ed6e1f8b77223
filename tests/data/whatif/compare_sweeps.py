"""The largest batch under each sweep's cap, predicted from the base recording, against the sweep.

    python3 compare_sweeps.py MEMSCOPE_BINARY [--truth truth_heldout.json] [--recordings DIR]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRUTH = sys.argv[sys.argv.index("--truth") + 1] if "--truth" in sys.argv else "truth.json"
RECORDINGS = sys.argv[sys.argv.index("--recordings") + 1] if "--recordings" in sys.argv else HERE
truth = json.load(open(os.path.join(HERE, TRUTH)))
for s in truth["sweeps"]:
    ran = [r["batch"] for r in s["runs"] if r["ok"]]
    failed = [r["batch"] for r in s["runs"] if not r["ok"]]
    opts = ["--checkpoint", "all"] if s["variant"] == "ckpt_all" else ["--precision", "fp32"]
    out = subprocess.run([sys.argv[1], "whatif", os.path.join(RECORDINGS, "whatif_%s_base.pickle.gz" % s["model"]), "--recorded-batch",
                          str(s["recorded_batch"]), "--capacity", str(s["cap_bytes"]), "--max-batch", "--json"] + opts,
                         capture_output=True, text=True)
    mb = json.loads(out.stdout)["max_batch"]
    lo, hi = max(ran), (min(failed) if failed else None)
    ok = lo <= mb and (hi is None or mb < hi)
    print("| %s | %s | %s | %d | %s | %d | %s |" % (s["model"], s["variant"], f"{s['cap_bytes']:,}", lo, hi, mb, "yes" if ok else "no"))
