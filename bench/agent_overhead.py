#!/usr/bin/env python3
"""What live recording costs a training loop: no recording, torch's own recording, the
memscope agent, and the agent's light mode, run interleaved (issue 20; the table is in
docs/PERFORMANCE.md, "Live recording cost").

    CUDA_VISIBLE_DEVICES=0 python3 bench/agent_overhead.py OUTDIR [--rounds 3] [--steps 60]
        [--agent agent] [--agent-before DIR] [--loops trainer,qwen,many_small] [--budget-s 500]

Each run is its own process. "trainer" is a Hugging Face Trainer (GPT-2 config from
scratch, 12 layers, hidden 768, 512 tokens, batch 8, bf16, no downloads): deep Python
stacks. "qwen" and "many_small" are the project's own loops (agent/tools/train_seed.py).
Modes:
  none          no recording
  torch         torch.cuda.memory._record_memory_history(stacks="python"), as a user would
  agent         the agent (MEMSCOPE_AGENT=1, what `memscope record` sets), with a client
                reading the stream as it comes
  light         the agent with MEMSCOPE_AGENT_LIGHT=1 (stacks on allocations only)
  markers       the agent with MEMSCOPE_AGENT_MARKERS=1 (no stacks; forward/backward/zero_grad
                markers from nn.Module.__call__ and autograd, torch's Optimizer.* annotations)
  nostacks, markers-fwd, markers-hooks
                markers mode's parts: no stacks and no markers; the forward's marker only;
                the forward's marker from torch's global module hooks (MODE_ENV below)
  agent-before  the agent of another checkout (--agent-before), for a before/after
Per run: whole run (trainer.train() or the seed loop), median step (steps after the
first 5), the process's wall time, and for the agent: events received, dropped, the
requested peak of the received events against torch's requested_bytes.all.peak, the
tracker's counters and the CPU time of every thread. A last run checks the stream
against torch's own trace, stack frames included. OUTDIR/agent_overhead.json has it all.
"""

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---------------------------------------------------------------- child: the loops

def thread_cpu():
    """CPU seconds and voluntary context switches of every thread of this process."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/self/task/%s/status" % tid) as f:
                vol = [l for l in f if l.startswith("voluntary_ctxt_switches")]
        except OSError:
            continue
        cpu = (int(fields[11]) + int(fields[12])) / tick
        if cpu < 0.05 and int(tid) not in names:
            continue
        out.append({"tid": int(tid), "name": names.get(int(tid), "(native)"), "cpu_s": round(cpu, 2),
                    "voluntary_switches": int(vol[0].split()[1]) if vol else None})
    out.sort(key=lambda t: -t["cpu_s"])
    return out[:12]


def child_trainer(a):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

    t_start = time.perf_counter()
    if a.mode == "torch":
        torch.cuda.memory._record_memory_history(stacks="python")
    batch, seq, vocab = 8, 512, 32000
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_positions=seq, n_embd=768, n_layer=12, n_head=12))

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return a.steps * batch

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            ids = torch.randint(0, vocab, (seq,), generator=g)
            return {"input_ids": ids, "labels": ids}

    marks = []

    class Marks(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            marks.append(time.perf_counter())

        def on_step_end(self, args, state, control, **kw):
            marks.append(time.perf_counter())

    common = dict(output_dir=tempfile.mkdtemp(prefix="ao-"), max_steps=a.steps, per_device_train_batch_size=batch,
                  logging_strategy="no", save_strategy="no", report_to="none", disable_tqdm=True,
                  dataloader_num_workers=0, seed=0)
    precision = "bf16"
    try:
        args = TrainingArguments(bf16=True, **common)
    except Exception as e:  # noqa: no bf16 here
        precision = "fp32 (%s)" % e
        args = TrainingArguments(**common)
    trainer = Trainer(model=model, args=args, train_dataset=Data(), callbacks=[Marks()])
    t0 = time.perf_counter()
    trainer.train()
    torch.cuda.synchronize()
    train_s = time.perf_counter() - t0
    steps = [b - c for c, b in zip(marks, marks[1:])]
    return finish_child(a, torch, {"loop": "trainer", "precision": precision, "whole_s": train_s,
                                   "setup_s": t0 - t_start, "step_s": steps,
                                   "median_step_s": statistics.median(steps[5:] if len(steps) > 10 else steps)},
                        keep=(model, trainer))


KEEP = []


def finish_child(a, torch, r, keep=()):
    KEEP.append(keep)  # alive past the reference snapshot, like train_seed.py
    ms = torch.cuda.memory_stats()
    r.update(requested_peak=ms.get("requested_bytes.all.peak"), reserved_peak=ms.get("reserved_bytes.all.peak"),
             gpu=torch.cuda.get_device_name(0), torch=torch.__version__, python=sys.version.split()[0])
    try:
        import transformers

        r["transformers"] = transformers.__version__
    except Exception:
        pass
    r["threads"] = thread_cpu()
    agent = sys.modules.get("memscope_agent")
    if agent is not None and agent.running() is not None and hasattr(agent.running().source, "stats"):
        r["tracker"] = agent.running().source.stats()
    if a.snapshot_time:  # what getting torch's own data costs at the end
        t0 = time.perf_counter()
        snap = torch.cuda.memory._snapshot()
        r["snapshot_s"] = time.perf_counter() - t0
        r["snapshot_trace_events"] = sum(len(t) for t in snap["device_traces"])
        del snap
    if a.dump:
        import pickle

        snap = torch.cuda.memory._snapshot()
        with open(a.dump, "wb") as f:
            pickle.dump(snap, f, protocol=4)
    with open(a.stats, "w") as f:
        json.dump(r, f)
    return 0


# ---------------------------------------------------------------- parent: the runs

class Stream:
    """Reads an agent's stream into a file from another thread (as `memscope record`
    writes its recovery file), for decoding after the run."""

    def __init__(self, agent_dir, sock, path):
        sys.path.insert(0, agent_dir)
        from memscope_agent import client

        self.client = client
        self.sock_path, self.path = sock, path
        self.error = None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            s = self.client.connect(self.sock_path, timeout=600)
            with open(self.path, "wb") as f:
                while True:
                    data = s.recv(1 << 20)
                    if not data:
                        break
                    f.write(data)
            s.close()
        except Exception as e:
            self.error = "%s: %s" % (type(e).__name__, e)


def scan(agent_dir, path, full=False):
    """Counts, requested peak and END of a raw stream; full=True also decodes every event."""
    sys.path.insert(0, agent_dir)
    from memscope_agent import protocol as P

    with open(path, "rb") as f:
        data = f.read()
    out = {"bytes": len(data), "events": 0, "frees_with_stack": 0, "frees": 0, "events_with_stack": 0, "end": None,
           "errors": [], "annotations": {}}
    live, cur, peak = {}, 0, 0
    strings = {}
    alloc, free_completed = P.ACTIONS.index("alloc"), P.ACTIONS.index("free_completed")
    frees = {P.ACTIONS.index("free_requested"), free_completed}
    at = 0
    dec = P.Decoder() if full else None
    while at + 5 <= len(data):
        length, kind = struct.unpack_from("<IB", data, at)
        payload = data[at + 5:at + 4 + length]
        at += 4 + length
        if kind == P.EVENTS:
            _dev, _flags, count = P.EVENTS_HEAD.unpack_from(payload)
            out["events"] += count
            for rec in P.EVENT.iter_unpack(payload[P.EVENTS_HEAD.size:]):
                action, stack, addr, size = rec[0], rec[3], rec[4], rec[5]
                out["events_with_stack"] += stack != 0
                if action == alloc:
                    live[addr] = size
                    cur += size
                    peak = max(peak, cur)
                elif action in frees:
                    out["frees"] += 1
                    out["frees_with_stack"] += stack != 0
                    if action == free_completed:
                        cur -= live.pop(addr, 0)
        elif kind == P.END:
            out["end"] = json.loads(payload or b"{}")
        elif kind == P.STRING:
            strings[P.STRING_HEAD.unpack_from(payload)[0]] = payload[4:].decode("utf-8", "replace")
        elif kind == P.ANNOTATION:
            _d, stage, name, _t = P.ANNOTATION_REC.unpack_from(payload)
            key = "%s %s" % (strings.get(name, "?").split("#")[0], "END" if stage else "START")
            out["annotations"][key] = out["annotations"].get(key, 0) + 1
        elif kind == P.ERROR:
            out["errors"].append(json.loads(payload).get("message"))
    if dec is not None:
        dec.feed(data)
        out["decoded"] = dec
    out["received_peak"] = peak
    return out


# The agent's modes besides the full one, and the parts of markers mode on their own.
MODE_ENV = {
    "light": {"MEMSCOPE_AGENT_LIGHT": "1"},
    "markers": {"MEMSCOPE_AGENT_MARKERS": "1"},
    "nostacks": {"MEMSCOPE_AGENT_MARKERS": "1", "MEMSCOPE_AGENT_MARKERS_FORWARD": "off",
                 "MEMSCOPE_AGENT_MARKERS_OTHER": ""},  # context=None, no markers
    "markers-fwd": {"MEMSCOPE_AGENT_MARKERS": "1", "MEMSCOPE_AGENT_MARKERS_OTHER": ""},  # the forward's only
    "markers-hooks": {"MEMSCOPE_AGENT_MARKERS": "1", "MEMSCOPE_AGENT_MARKERS_FORWARD": "hooks"},  # global module hooks
}


def run_one(a, loop, mode, tag, extra_env=None, dump=None, snapshot_time=False, steps=None):
    tmp = tempfile.mkdtemp(prefix="ao-run-")
    stats = os.path.join(tmp, "stats.json")
    env = dict(os.environ, PYTHONUNBUFFERED="1", MEMSCOPE_AGENT_QUIET="1", TOKENIZERS_PARALLELISM="false")
    agent_dir = os.path.abspath(a.agent_before if mode == "agent-before" else a.agent)
    if mode in ("agent", "agent-before") or mode in MODE_ENV:
        sock = os.path.join(tmp, "a.sock")
        env.update(MEMSCOPE_AGENT="1", MEMSCOPE_AGENT_SOCKET=sock, MEMSCOPE_AGENT_MODE="tracker",
                   PYTHONPATH=agent_dir + os.pathsep + env.get("PYTHONPATH", ""))
        env.update(MODE_ENV.get(mode, {}))
    env.update(extra_env or {})
    if loop == "trainer":
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "trainer", "--mode", mode, "--steps",
               str(steps or a.steps), "--stats", stats]
        if dump:
            cmd += ["--dump", dump]
        if snapshot_time:
            cmd += ["--snapshot-time"]
    else:
        n = {"qwen": a.qwen_steps, "many_small": a.small_steps}[loop]
        cmd = [sys.executable, os.path.join(ROOT, "agent", "tools", "train_seed.py"), loop, "--steps", str(n),
               "--stats", stats] + (["--record"] if mode == "torch" else []) + (["--dump", dump] if dump else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stream = Stream(agent_dir, sock, os.path.join(tmp, "stream.mscp")) if "MEMSCOPE_AGENT" in env else None
    try:
        log, _ = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        log, _ = proc.communicate()
        log += "\n(killed after 300 s)"
    wall = time.perf_counter() - t0
    r = {"tag": tag, "loop": loop, "mode": mode, "rc": proc.returncode, "process_s": wall}
    try:
        with open(stats) as f:
            st = json.load(f)
    except (OSError, ValueError):
        st = {}
        r["log"] = log[-3000:]
    if loop != "trainer" and st:
        st["whole_s"] = st.pop("loop_s")
    r.update({k: v for k, v in st.items() if k != "step_s"})
    r["step_ms"] = [round(s * 1e3, 2) for s in st.get("step_s", [])]
    if stream is not None:
        stream.thread.join(60 if proc.returncode == 0 else 5)
        if stream.error or not os.path.exists(stream.path):
            r["stream_error"] = stream.error or "no stream"
        else:
            sc = scan(agent_dir, stream.path, full=bool(dump))
            end = sc["end"] or {}
            torch_peak = ((end.get("memory_stats") or {}).get("0") or {}).get("requested_bytes.all.peak")
            r["stream"] = {"events": sc["events"], "bytes": sc["bytes"], "dropped": end.get("dropped"),
                           "accepted": (end.get("tracker") or {}).get("accepted"),
                           "received_peak": sc["received_peak"], "torch_requested_peak": torch_peak,
                           "peak_equal": sc["received_peak"] == torch_peak, "frees": sc["frees"],
                           "frees_with_stack": sc["frees_with_stack"], "events_with_stack": sc["events_with_stack"],
                           "annotations": sc["annotations"], "errors": sc["errors"],
                           "end_tracker": end.get("tracker")}
            if dump and "decoded" in sc:
                r["compare"] = compare_with_torch(sc["decoded"], dump)
    if proc.returncode != 0 and "log" not in r:
        r["log"] = log[-3000:]
    return r


def compare_with_torch(dec, dump):
    import pickle

    with open(dump, "rb") as f:
        theirs = pickle.load(f)["device_traces"][0]
    ours = dec.devices.get(0, [])
    n = min(len(ours), len(theirs))
    first = None
    frames_differ = 0
    for i in range(n):
        x, y = ours[i], theirs[i]
        if (x["action"], x.get("addr"), x["size"], x["stream"]) != (y["action"], y.get("addr"), y["size"], y["stream"]):
            first = i
            break
        if x["frames"] != y.get("frames", []):
            frames_differ += 1
    return {"received": len(ours), "torch_trace": len(theirs), "first_difference": first,
            "events_with_different_frames": frames_differ,
            "after_reference": [e["action"] for e in ours[len(theirs):]][:4]}


def summarize(results):
    table = {}
    for r in results:
        if r.get("rc") != 0 or "whole_s" not in r:
            continue
        t = table.setdefault(r["loop"], {}).setdefault(r["mode"], {"whole_s": [], "median_step_ms": []})
        t["whole_s"].append(round(r["whole_s"], 3))
        t["median_step_ms"].append(round(r["median_step_s"] * 1e3, 2))
    for loop, modes in table.items():
        base = modes.get("none")
        ref = modes.get("torch")
        for mode, t in modes.items():
            t["whole_median_s"] = statistics.median(t["whole_s"])
            t["step_median_ms"] = statistics.median(t["median_step_ms"])
            for name, b in (("vs_none_pct", base), ("vs_torch_pct", ref)):
                if b and b is not t:
                    t[name] = {"whole": round(100 * (t["whole_median_s"] / statistics.median(b["whole_s"]) - 1), 2),
                               "step": round(100 * (t["step_median_ms"] / statistics.median(b["median_step_ms"]) - 1), 2)}
    return table


def build_tracker(agent_dir, out, name):
    code = "import sys; sys.path.insert(0, %r); import torch, memscope_agent.tracker as t; t.load(torch, verbose=True)" % agent_dir
    log = open(os.path.join(out, "build_%s.log" % name), "w")
    return subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--qwen-steps", type=int, default=25)
    p.add_argument("--small-steps", type=int, default=100)
    p.add_argument("--agent", default=os.path.join(ROOT, "agent"), help="the agent package's parent folder")
    p.add_argument("--agent-before", default=None, help="another agent to compare (mode agent-before)")
    p.add_argument("--loops", default="trainer,qwen,many_small")
    p.add_argument("--trainer-modes", default=None)
    p.add_argument("--seed-modes", default="torch,agent,light,markers")
    p.add_argument("--budget-s", type=float, default=500, help="start no run after this many seconds")
    p.add_argument("--no-verify", action="store_true")
    p.add_argument("--child", choices=["trainer"])
    p.add_argument("--mode", default="none")
    p.add_argument("--stats")
    p.add_argument("--dump")
    p.add_argument("--snapshot-time", action="store_true")
    a = p.parse_args()
    if a.child:
        return child_trainer(a)
    if not a.out:
        p.error("OUTDIR is required")
    os.makedirs(a.out, exist_ok=True)
    t_begin = time.perf_counter()
    builds = [build_tracker(os.path.abspath(a.agent), a.out, "agent")]
    if a.agent_before:
        builds.append(build_tracker(os.path.abspath(a.agent_before), a.out, "before"))
    for b in builds:
        b.wait()
    print("tracker builds: %s in %.1f s" % ([b.returncode for b in builds], time.perf_counter() - t_begin), flush=True)
    trainer_modes = (a.trainer_modes or ("none,torch,agent,light,markers" + (",agent-before" if a.agent_before else ""))).split(",")
    loops = a.loops.split(",")
    plan = []
    if "trainer" in loops:
        for i in range(a.rounds):
            # each round in another order, so that no mode always follows the same one
            order = trainer_modes[i % len(trainer_modes):] + trainer_modes[:i % len(trainer_modes)]
            plan += [("trainer", m, "trainer %s %d" % (m, i + 1), i == 0 and m == "torch") for m in order]
    if not a.no_verify:
        plan.append(("verify", "agent", "trainer agent, checked against torch's trace", False))
    for i in range(a.rounds):
        for loop in ("qwen", "many_small"):
            if loop in loops:
                plan += [(loop, m, "%s %s %d" % (loop, m, i + 1), False) for m in a.seed_modes.split(",")]
    results = []
    out_json = os.path.join(a.out, "agent_overhead.json")
    for loop, mode, tag, snap in plan:
        if time.perf_counter() - t_begin > a.budget_s:
            print("budget spent: skipping", tag, flush=True)
            continue
        if loop == "verify":
            dump = os.path.join(tempfile.mkdtemp(prefix="ao-v-"), "torch.pickle")
            r = run_one(a, "trainer", mode, tag, extra_env={"MEMSCOPE_AGENT_MAX_ENTRIES": str(sys.maxsize)},
                        dump=dump, steps=10)
            r["loop"] = "verify"
        else:
            r = run_one(a, loop, mode, tag, snapshot_time=snap)
        results.append(r)
        s = r.get("stream") or {}
        print("%-28s rc %s whole %.3f s step %.2f ms process %.1f s%s%s" % (
            tag, r.get("rc"), r.get("whole_s", float("nan")), 1e3 * r.get("median_step_s", float("nan")),
            r["process_s"], (" events %s dropped %s peak_equal %s" % (s.get("events"), s.get("dropped"),
                                                                     s.get("peak_equal"))) if s else "",
            (" compare %s" % r["compare"]) if "compare" in r else ""), flush=True)
        if r.get("rc") != 0:
            print(r.get("log", "")[-1500:], flush=True)
        with open(out_json, "w") as f:
            json.dump({"results": results, "summary": summarize(results)}, f, indent=1, default=str)
    print(json.dumps(summarize(results), indent=1), flush=True)
    print("total %.1f s" % (time.perf_counter() - t_begin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
