"""GPU validation of live attach (the issue's "Done when"), one command:

    PYTHONPATH=agent python3 agent/tools/live_validation.py OUTDIR

1. builds the C++ tracker extension for this torch (timed, cached);
2. qwen seed loop, alternating runs without the agent (torch's own recording only) and
   under the agent (tracker mode) with a protocol client attached; for each agent run
   the client's events are compared with the process's own final _snapshot() trace
   (count, order, action, address, size, stream, frames), the peak of the received
   events with torch's requested_bytes.all.peak, and the median step times compared;
3. the many_small loop (~100k+ events/s) under the agent: no dropped events;
4. the same under the polling fallback (smaller), for completeness.
Writes OUTDIR/live_validation.json, the received qwen stream (.mscp) and snapshot.
"""

import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
sys.path.insert(0, AGENT)

from memscope_agent import client  # noqa: E402

TRAIN = os.path.join(HERE, "train_seed.py")
OUT = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
os.makedirs(OUT, exist_ok=True)
RESULTS = {}


def save():
    with open(os.path.join(OUT, "live_validation.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = AGENT + os.pathsep + e.get("PYTHONPATH", "")
    e["PYTHONUNBUFFERED"] = "1"
    # The agent keeps no copy of torch's trace by default; this comparison needs it all.
    e["MEMSCOPE_AGENT_MAX_ENTRIES"] = str(sys.maxsize)
    return e


def requested_peak(trace):
    live, cur, peak = {}, 0, 0
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            peak = max(peak, cur)
        elif e["action"] == "free_completed":
            cur -= live.pop(e["addr"], 0)
    return peak


def compare(ours, theirs):
    n = min(len(ours), len(theirs))
    first_diff = None
    frames_differ = 0
    max_dt = 0
    for i in range(n):
        a, b = ours[i], theirs[i]
        if (a["action"], a.get("addr"), a["size"], a["stream"]) != (b["action"], b.get("addr"), b["size"], b["stream"]):
            first_diff = i
            break
        if a["frames"] != b.get("frames", []):
            frames_differ += 1
        max_dt = max(max_dt, abs(a.get("time_us", 0) - b.get("time_us", 0)))
    # torch copies the trace before appending the `snapshot` marker of that very
    # _snapshot() call; the stream carries it right after.
    extra = [e["action"] for e in ours[len(theirs):]]
    return {"received": len(ours), "torch_trace": len(theirs), "after_reference": extra,
            "same_count": len(ours) == len(theirs) + (1 if extra == ["snapshot"] else 0),
            "identical_prefix": first_diff is None, "first_difference": first_diff,
            "events_with_different_frames": frames_differ, "max_time_us_difference": max_dt}


def run(model, steps, agent_mode=None, tag="", keep_stream=False, extra=(), launch="module", agent_env=None):
    tmp = tempfile.mkdtemp(prefix="msv-")
    stats_path = os.path.join(tmp, "stats.json")
    dump = os.path.join(tmp, "snap.pickle")
    args = [TRAIN, model, "--steps", str(steps), "--stats", stats_path, "--dump", dump] + list(extra)
    t0 = time.time()
    e = env()
    e.update(agent_env or {})
    if agent_mode and launch == "env":  # an unmodified script under MEMSCOPE_AGENT=1
        sock = os.path.join(tmp, "a.sock")
        e.update(MEMSCOPE_AGENT="1", MEMSCOPE_AGENT_SOCKET=sock, MEMSCOPE_AGENT_MODE=agent_mode)
        cmd = [sys.executable] + args
    elif agent_mode:
        sock = os.path.join(tmp, "a.sock")
        cmd = [sys.executable, "-m", "memscope_agent", "--mode", agent_mode, "--socket", sock] + args
    else:
        cmd = [sys.executable] + args + ["--record"]
    proc = subprocess.Popen(cmd, env=e)
    result = {"cmd": " ".join(cmd[1:])}
    dec = None
    if agent_mode:
        raw = open(os.path.join(OUT, "qwen_stream.mscp"), "wb") if keep_stream else None
        s = client.connect(sock, timeout=900)
        seen = []

        def on_message(kind, payload, d):
            seen.append((time.monotonic(), d.event_count))

        if raw:
            real_recv = s.recv

            class Tee:
                def __getattr__(self, name):
                    return getattr(s, name)

                def recv(self, n):
                    data = real_recv(n)
                    raw.write(data)
                    return data

            dec = client.receive(Tee(), on_message=on_message)
            raw.close()
        else:
            dec = client.receive(s, on_message=on_message)
        s.close()
        # Updates: how often the received count grew during the run.
        grow = [t for (t, n), (_, m) in zip(seen[1:], seen) if n > m]
        result["client_updates_per_s"] = round(len(grow) / max(1e-9, grow[-1] - grow[0]), 1) if len(grow) > 1 else 0
    rc = proc.wait()
    result["rc"] = rc
    result["wall_s"] = round(time.time() - t0, 1)
    with open(stats_path) as f:
        st = json.load(f)
    result.update({k: st[k] for k in ("median_step_s", "requested_peak", "reserved_peak", "trace_events", "loop_s",
                                      "gpu", "torch", "batch", "steps")})
    result["events_per_s"] = round(st["trace_events"] / st["loop_s"])
    if dec is not None:
        with open(dump, "rb") as f:
            theirs = pickle.load(f)["device_traces"][0]
        ours = dec.devices.get(0, [])
        result["compare"] = compare(ours, theirs)
        result["received_peak"] = requested_peak(ours)
        result["torch_requested_peak"] = st["requested_peak"]
        result["peak_equal"] = result["received_peak"] == st["requested_peak"]
        result["end"] = dec.end
        result["dropped"] = (dec.end or {}).get("dropped")
        result["annotations"] = len(dec.annotations)
    RESULTS[tag] = result
    save()
    print("==", tag, json.dumps({k: v for k, v in result.items() if k not in ("cmd", "end")}, default=str), flush=True)
    return result


def main():
    import torch

    RESULTS["env"] = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "python": sys.version.split()[0]}
    t0 = time.time()
    from memscope_agent import tracker

    try:
        tracker.load(torch, verbose=False)
        RESULTS["tracker_build_s"] = round(time.time() - t0, 1)
    except Exception as e:
        RESULTS["tracker_build_error"] = str(e)
        print("tracker build failed:", e, flush=True)
    save()
    steps = int(os.environ.get("QWEN_STEPS", "25"))
    mode = "tracker" if "tracker_build_error" not in RESULTS else "poll"
    for rep in range(2):
        run("qwen", steps, None, tag="qwen_baseline_%d" % rep)
        run("qwen", steps, mode, tag="qwen_agent_%d" % rep, keep_stream=rep == 0)
    base = [RESULTS["qwen_baseline_%d" % r]["median_step_s"] for r in range(2)]
    agent = [RESULTS["qwen_agent_%d" % r]["median_step_s"] for r in range(2)]
    RESULTS["qwen_step_overhead_pct"] = round(100 * (statistics.mean(agent) / statistics.mean(base) - 1), 2)
    save()
    ms_steps = os.environ.get("SMALL_STEPS", "100")
    run("many_small", int(ms_steps), None, tag="many_small_baseline")
    run("many_small", int(ms_steps), mode, tag="many_small_agent")
    RESULTS["many_small_step_overhead_pct"] = round(
        100 * (RESULTS["many_small_agent"]["median_step_s"] / RESULTS["many_small_baseline"]["median_step_s"] - 1), 2)
    save()
    run("many_small", 20, "poll", tag="many_small_poll")
    run("many_small", 20, mode, tag="many_small_env_switch", launch="env")
    run("many_small", 10, mode, tag="many_small_stacks_all", agent_env={"MEMSCOPE_AGENT_STACKS": "all"},
        extra=["--record-stacks", "all"])
    keys = ("env", "tracker_build_s", "tracker_build_error", "qwen_step_overhead_pct", "many_small_step_overhead_pct")
    print("SUMMARY", json.dumps({k: RESULTS.get(k) for k in keys}))


if __name__ == "__main__":
    main()
