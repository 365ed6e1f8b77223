"""GPU validation of live attach to every rank of a torchrun job (docs/LIVE.md, "torchrun"):

    PYTHONPATH=agent python3 agent/tools/multirank_validate.py OUTDIR [ROUNDS]

Builds the tracker extension once, then ROUNDS (3) rounds, each a 2-rank DDP run of
ddp_train.py without the agent and one under it, recorded by record_ranks.py (one Python
protocol client per rank), alternating which goes first. For each agent run and rank:
events received vs the agent's own count and torch's trace (the first round also compares
event by event with the trace the rank dumped), dropped events, and the received trace's
requested peak vs the rank's torch counters. Then the median step times, and a short run
kept as test data. Writes OUTDIR/multirank_validation.json and the streams (.mscp).
"""

import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
sys.path.insert(0, AGENT)
sys.path.insert(0, HERE)

from memscope_agent import protocol as P  # noqa: E402

OUT = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
NPROC = os.environ.get("NPROC", "2")
STEPS = os.environ.get("STEPS", "40")
os.makedirs(OUT, exist_ok=True)
R = {"rounds": []}


def save():
    with open(os.path.join(OUT, "multirank_validation.json"), "w") as f:
        json.dump(R, f, indent=1, default=str)


def env():
    e = dict(os.environ, PYTHONUNBUFFERED="1")
    e["PYTHONPATH"] = AGENT + os.pathsep + e.get("PYTHONPATH", "")
    return e


def train_cmd(stats, extra=()):
    return ["torchrun", "--standalone", "--nproc_per_node", NPROC, os.path.join(HERE, "ddp_train.py"),
            "--steps", STEPS, "--stats", stats] + os.environ.get("TRAIN_ARGS", "").split() + list(extra)


def read_stats(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                s = json.load(f)
            out[s["rank"]] = s
    return out


def baseline(tag):
    tmp = tempfile.mkdtemp(prefix="mr-")
    t0 = time.time()
    rc = subprocess.call(train_cmd(tmp), env=env(), timeout=240)
    st = read_stats(tmp)
    r = {"tag": tag, "agent": False, "rc": rc, "wall_s": round(time.time() - t0, 1),
         "median_step_ms": {k: round(v["median_step_s"] * 1e3, 3) for k, v in st.items()},
         "counters": {k: {c: v[c] for c in ("max_memory_allocated", "max_memory_reserved", "requested_bytes.all.peak")}
                      for k, v in st.items()}}
    print("==", json.dumps(r), flush=True)
    return r


def compare(ours, theirs):
    n = min(len(ours), len(theirs))
    first = None
    frames = 0
    for i in range(n):
        a, b = ours[i], theirs[i]
        if (a["action"], a.get("addr"), a["size"], a["stream"]) != (b["action"], b.get("addr"), b["size"], b["stream"]):
            first = i
            break
        if a["frames"] != b.get("frames", []):
            frames += 1
    return {"received": len(ours), "torch_trace": len(theirs), "identical_prefix": first is None,
            "first_difference": first, "events_with_different_frames": frames,
            "after_reference": [e["action"] for e in ours[len(theirs):]][:10]}


def agent_run(tag, keep=None, dump=False, extra=()):
    tmp = tempfile.mkdtemp(prefix="mr-")
    stats, rec, ref = os.path.join(tmp, "stats"), os.path.join(tmp, "rec"), os.path.join(tmp, "ref")
    t0 = time.time()
    cmd = [sys.executable, os.path.join(HERE, "record_ranks.py"), "-o", rec, "--"] + \
        train_cmd(stats, (["--dump", ref] if dump else []) + list(extra))
    rc = subprocess.call(cmd, env=env(), timeout=300)
    st = read_stats(stats)
    with open(os.path.join(rec, "record.json")) as f:
        recj = json.load(f)
    r = {"tag": tag, "agent": True, "rc": rc, "wall_s": round(time.time() - t0, 1),
         "median_step_ms": {k: round(v["median_step_s"] * 1e3, 3) for k, v in st.items()}, "ranks": {}}
    for rr in recj["ranks"]:
        k = rr["rank"]
        s = st.get(k, {})
        ms = rr.get("memory_stats") or {}
        info = {"state": rr["state"], "events_received": rr["events_received"], "dropped": rr["dropped"],
                "tracker_accepted": (rr.get("tracker") or {}).get("accepted"),
                "queue_high_water": (rr.get("tracker") or {}).get("queue_high_water"),
                "torch_trace_events_at_dump": s.get("trace_events"), "truncated": rr["truncated"],
                "received_requested_peak": rr["received_requested_peak"],
                "received_requested_peak_rounded512": rr["received_requested_peak_rounded512"],
                "script_requested_bytes.all.peak": s.get("requested_bytes.all.peak"),
                "script_max_memory_allocated": s.get("max_memory_allocated"),
                "script_max_memory_reserved": s.get("max_memory_reserved"),
                "end_requested_peak": ms.get("requested_bytes.all.peak"),
                "end_allocated_peak": ms.get("allocated_bytes.all.peak"),
                "end_reserved_peak": ms.get("reserved_bytes.all.peak"), "lagged_at_s": rr.get("lagged_at_s"),
                "annotations": rr["annotations"], "agent_errors": rr["agent_errors"]}
        info["no_drop"] = rr["dropped"] == 0 and rr["truncated"] == 0 and rr["events_received"] == info["tracker_accepted"]
        info["requested_peak_equal"] = rr["received_requested_peak"] == s.get("requested_bytes.all.peak")
        if dump and os.path.exists(os.path.join(ref, "rank%d_reference.pickle" % k)):
            with open(os.path.join(ref, "rank%d_reference.pickle" % k), "rb") as f:
                refd = pickle.load(f)
            dec = P.Decoder()
            with open(os.path.join(rec, "rank%d.mscp" % k), "rb") as f:
                dec.feed(f.read())
            info["compare"] = compare(dec.devices.get(refd["device"], []), refd["trace"])
        r["ranks"][k] = info
        if keep:
            shutil.copy(os.path.join(rec, "rank%d.mscp" % k), os.path.join(OUT, "%srank%d.mscp" % (keep, k)))
    print("==", json.dumps(r), flush=True)
    return r


def main():
    import torch

    R["env"] = {"torch": torch.__version__, "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
                "python": sys.version.split()[0], "nproc": NPROC, "steps": STEPS,
                "backend": os.environ.get("DDP_BACKEND", "nccl"), "train_args": os.environ.get("TRAIN_ARGS", "")}
    t0 = time.time()
    from memscope_agent import tracker

    tracker.load(torch)
    R["tracker_build_s"] = round(time.time() - t0, 1)
    save()
    for i in range(ROUNDS):
        pair = [lambda: baseline("none_%d" % i), lambda: agent_run("agent_%d" % i, keep="" if i == 0 else None, dump=i == 0)]
        if i % 2:
            pair.reverse()
        R["rounds"].append([f() for f in pair])
        save()
    med = {}
    for kind in (False, True):
        per_round = [max(r["median_step_ms"].values()) for rnd in R["rounds"] for r in rnd if r["agent"] == kind]
        med[kind] = statistics.median(per_round)
        R["step_ms_%s" % ("agent" if kind else "none")] = per_round
    R["median_step_ms_none"], R["median_step_ms_agent"] = med[False], med[True]
    R["overhead_pct"] = round(100 * (med[True] / med[False] - 1), 2)
    save()
    R["small"] = agent_run("small", keep="small_", extra=["--steps", "4", "--layers", "2", "--hidden", "256", "--batch",
                                                          "2", "--seq", "64"])
    save()
    keys = ("env", "tracker_build_s", "step_ms_none", "step_ms_agent", "overhead_pct")
    print("SUMMARY", json.dumps({k: R.get(k) for k in keys}), flush=True)


if __name__ == "__main__":
    main()
