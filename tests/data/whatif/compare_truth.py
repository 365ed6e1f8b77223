"""Prints predicted vs real peaks for every run in truth.json (memscope whatif on the base recordings).

    python3 compare_truth.py MEMSCOPE_BINARY [--markdown] [--truth truth_heldout.json] [--recordings DIR]

--recordings DIR takes the base recordings from DIR (the same runs recorded with
TRUTH_STACKS=all: whatif_all/).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MEMSCOPE = sys.argv[1]
MARKDOWN = "--markdown" in sys.argv
TRUTH = sys.argv[sys.argv.index("--truth") + 1] if "--truth" in sys.argv else "truth.json"
RECORDINGS = sys.argv[sys.argv.index("--recordings") + 1] if "--recordings" in sys.argv else HERE


def options(model, name, cfg, base_batch, base_seq, base_precision="fp32"):
    o = []
    c = cfg
    if c.get("ckpt"):
        o += ["--checkpoint", "all" if c["ckpt"] < 0 else str(c["ckpt"])]
    if c.get("precision", "fp32") != base_precision:
        o += ["--precision", c.get("precision", "fp32")]
    opt = c.get("optimizer", "adamw")
    if opt != "adamw":
        o += ["--optimizer", opt]
    if c.get("accumulate", 1) > 1:
        o += ["--accumulate", str(c["accumulate"])]
    if c["batch"] != base_batch:
        o += ["--batch", str(c["batch"])]
    if base_seq and c.get("seq") and c["seq"] != base_seq:
        o += ["--seq", str(c["seq"]), "--recorded-seq", str(base_seq)]
    return o


def main():
    truth = json.load(open(os.path.join(HERE, TRUTH)))
    bases = {r["model"]: r for r in truth["runs"] if r["name"].endswith("_base")}
    rows = []
    worst = (0, 0)
    for r in truth["runs"]:
        if not r.get("ok") or r["name"].endswith("_recorded"):
            continue
        base = bases[r["model"]]
        cfg = r["config"]
        o = options(r["model"], r["name"], cfg, base["config"]["batch"], base["config"].get("seq"),
                    base["config"].get("precision", "fp32"))
        rec = os.path.join(RECORDINGS, base["recording"] + ".gz")
        out = subprocess.run([MEMSCOPE, "whatif", rec, "--recorded-batch", str(base["config"]["batch"]), "--json"] + o +
                             (["--checkpoint", "0"] if False else []), capture_output=True, text=True)
        if out.returncode != 0:
            print(r["name"], "FAILED", out.stderr.strip())
            continue
        j = json.loads(out.stdout)
        ea = j["allocated_peak_bytes"] / r["max_allocated"] - 1
        er = j["reserved_peak_bytes"] / r["max_reserved"] - 1
        rows.append((r["name"], " ".join(o) or "(base)", r["max_allocated"], j["allocated_peak_bytes"], ea, r["max_reserved"],
                     j["reserved_peak_bytes"], er))
        worst = (max(worst[0], abs(ea)), max(worst[1], abs(er)))
    for x in rows:
        flag = "" if abs(x[4]) <= 0.05 and abs(x[7]) <= 0.08 else "  <-- MISS"
        if MARKDOWN:
            print("| `%s` | `%s` | %s | %s | %+.1f%% | %s | %s | %+.1f%% |" % (x[0], x[1], f"{x[2]:,}", f"{x[3]:,}", x[4] * 100,
                                                                          f"{x[5]:,}", f"{x[6]:,}", x[7] * 100))
        else:
            print("%-34s %-52s alloc %11d pred %11d %+6.1f%%  res %11d pred %11d %+6.1f%%%s" % (x[0], x[1], x[2], x[3], x[4] * 100,
                                                                                          x[5], x[6], x[7] * 100, flag))
    print("worst: allocated %.1f%%, reserved %.1f%%" % (worst[0] * 100, worst[1] * 100))


main()
