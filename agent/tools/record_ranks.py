"""Records every rank of a torchrun job with the Python protocol client (where memscope
itself is not built, e.g. the GPU machine); `memscope record --all-ranks` is the app's way.

    PYTHONPATH=agent python3 agent/tools/record_ranks.py -o DIR [--job ID] -- torchrun ... SCRIPT ARGS
    PYTHONPATH=agent python3 agent/tools/record_ranks.py -o DIR --job ID          # a running job

Launching, it sets MEMSCOPE_AGENT=ranks and MEMSCOPE_AGENT_JOB (so each rank's agent listens
on job-<ID>-rank-<R>.sock in the private directory), attaches to each rank as its socket
appears, and writes DIR/rank<R>.mscp (the raw stream: `memscope record --recover
rank<R>.mscp -o rank<R>.pickle`) and DIR/record.json: per rank the events received, the
agent's own count and dropped events (END), torch's counters the agent sent, the requested
peak of the received trace, and whether the stream ended, was lost, or lagged.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
sys.path.insert(0, AGENT)

from memscope_agent import client, protocol as P  # noqa: E402
from memscope_agent.transport import default_directory  # noqa: E402


def peaks(trace):
    """Requested peak of a trace (alloc/free_completed sizes) and the same with each size
    rounded up to 512 bytes (the caching allocator's block rounding, max_memory_allocated's
    unit for blocks that were split to size)."""
    live, cur, peak, cur512, peak512 = {}, 0, 0, 0, 0
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            cur512 += -(-e["size"] // 512) * 512
            peak, peak512 = max(peak, cur), max(peak512, cur512)
        elif e["action"] == "free_completed":
            s = live.pop(e["addr"], 0)
            cur -= s
            cur512 -= -(-s // 512) * 512
    return peak, peak512


class Rank:
    def __init__(self, rank, path, out):
        self.rank, self.path, self.out = rank, path, out
        self.decoder = P.Decoder()
        self.state = "connecting"
        self.error = None
        self.last_message = time.monotonic()
        self.statuses = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            s = client.connect(self.path, timeout=60)
        except OSError as e:
            self.state, self.error = "failed", str(e)
            return
        self.state = "streaming"
        with open(os.path.join(self.out, "rank%d.mscp" % self.rank), "wb") as raw:
            try:
                while True:
                    data = s.recv(1 << 20)
                    if not data:
                        break
                    raw.write(data)
                    for kind, _payload in self.decoder.feed(data):
                        self.last_message = time.monotonic()
                        if kind == P.STATUS:
                            self.statuses += 1
                    if self.decoder.end is not None:
                        break
            except (OSError, P.ProtocolError) as e:
                self.error = str(e)
        s.close()
        self.state = "ended" if self.decoder.end is not None else "lost"

    def result(self):
        d = self.decoder
        hello = d.hello or {}
        dev = hello.get("local_rank", 0) if d.devices.get(hello.get("local_rank", 0)) else (max(d.devices) if d.devices else 0)
        trace = d.devices.get(dev, [])
        peak, peak512 = peaks(trace)
        end = d.end or {}
        return {"rank": self.rank, "state": self.state, "error": self.error, "pid": hello.get("pid"),
                "job": hello.get("job"), "world_size": hello.get("world_size"), "device": dev,
                "events_received": d.event_count, "events_by_device": {k: len(v) for k, v in d.devices.items()},
                "agent_events_last_status": (d.status or {}).get("events"), "statuses": self.statuses,
                "dropped": end.get("dropped"), "tracker": end.get("tracker"), "truncated": d.truncated,
                "memory_stats": (end.get("memory_stats") or {}).get(str(dev)), "received_requested_peak": peak,
                "received_requested_peak_rounded512": peak512, "annotations": len(d.annotations),
                "agent_errors": d.errors}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--job")
    ap.add_argument("--lag", type=float, default=5.0, help="seconds without a message while others stream: lagging")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    os.makedirs(a.output, exist_ok=True)
    job = a.job or "rec-%d" % os.getpid()
    proc = None
    if cmd:
        env = dict(os.environ, MEMSCOPE_AGENT="ranks", MEMSCOPE_AGENT_JOB=job,
                   PYTHONPATH=AGENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("MEMSCOPE_AGENT_SOCKET", None)
        proc = subprocess.Popen(cmd, env=env)
    pattern = os.path.join(default_directory(), "job-%s-rank-*.sock" % job)
    ranks = {}
    lag_seen = {}
    t0 = time.monotonic()
    ended_at = None
    while True:
        for path in glob.glob(pattern):
            m = re.search(r"-rank-(\d+)\.sock$", path)
            if m and int(m.group(1)) not in ranks:
                ranks[int(m.group(1))] = Rank(int(m.group(1)), path, a.output)
        now = time.monotonic()
        streaming = [r for r in ranks.values() if r.state == "streaming"]
        for r in streaming:
            if now - r.last_message > a.lag and any(now - o.last_message < 1 for o in streaming if o is not r):
                lag_seen.setdefault(r.rank, round(now - t0, 1))
        if proc is not None and ended_at is None and proc.poll() is not None:
            ended_at = now
        done = all(not r.thread.is_alive() for r in ranks.values())
        if proc is None and ranks and done:
            break
        if ended_at is not None and (done or now - ended_at > 15):
            break
        if proc is None and not ranks and now - t0 > 30:
            print("record_ranks: no rank of job %s appeared in %s" % (job, default_directory()), file=sys.stderr)
            return 1
        time.sleep(0.05)
    result = {"job": job, "command": cmd, "rc": proc.returncode if proc else None,
              "ranks": [dict(ranks[k].result(), lagged_at_s=lag_seen.get(k)) for k in sorted(ranks)]}
    with open(os.path.join(a.output, "record.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)
    for r in result["ranks"]:
        print("rank %d: %s, %d events, dropped %s, requested peak %d" %
              (r["rank"], r["state"], r["events_received"], r["dropped"], r["received_requested_peak"]), flush=True)
    return proc.returncode if proc else 0


if __name__ == "__main__":
    sys.exit(main())
