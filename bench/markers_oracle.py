#!/usr/bin/env python3
"""What the agent's markers mode loses: the same loop recorded under the agent with full
stacks and in markers mode, each time with exact category labels (the labeller's rule,
samples/RECORDING.md), so that memscope's categories of both can be compared with the
truth (docs/PERFORMANCE.md, "Live recording cost").

    CUDA_VISIBLE_DEVICES=0 python3 bench/markers_oracle.py OUTDIR [--agent agent]
        [--loops trainer,qwen] [--modes agent,markers] [--trainer-steps 5] [--qwen-steps 4]

Per loop and mode, in its own process under the agent (as `memscope record` starts it, with
a client reading the stream): OUTDIR/NAME.mscp (the raw stream; `memscope record --recover
NAME.mscp -o NAME.pickle` turns it into a snapshot), NAME.labels.csv (t_us, ptr, nbytes,
label) and NAME.stats.json (the stream's counts, annotations by name, torch's peak).
Loops: "trainer" is bench/agent_overhead.py's Hugging Face Trainer (GPT-2 config, 12
layers, hidden 768, 512 tokens, batch 8, bf16); "qwen" the project's own loop
(agent/tools/train_seed.py's Qwen2-style model, batch 4, 256 tokens, AdamW).
Labels: every parameter at each step's start (PARAMETER), the batch (INPUT), every tensor
autograd saves (ACTIVATION), every .grad before the optimizer step (GRADIENT), the
optimizer's state after it (OPTIMIZER_STATE); anything else is an intermediate.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Labels:
    def __init__(self, torch):
        self.torch, self.rows = torch, []

    def tag(self, t, label):
        if isinstance(t, self.torch.Tensor) and t.is_cuda:
            st = t.untyped_storage()
            self.rows.append((time.time_ns() // 1000, st.data_ptr(), st.nbytes(), label))

    def tag_all(self, ts, label):
        for t in ts:
            self.tag(t, label)

    def tag_inputs(self, obj):
        if isinstance(obj, self.torch.Tensor):
            self.tag(obj, "INPUT")
        elif isinstance(obj, dict):
            for v in obj.values():
                self.tag_inputs(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                self.tag_inputs(v)

    def tag_optimizer(self, opt):
        inner = getattr(opt, "optimizer", opt)
        for state in inner.state.values():
            self.tag_all(state.values(), "OPTIMIZER_STATE")

    def activations(self):
        return self.torch.autograd.graph.saved_tensors_hooks(lambda t: (self.tag(t, "ACTIVATION"), t)[1], lambda t: t)

    def write(self, path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t_us", "ptr", "nbytes", "label"])
            w.writerows(self.rows)


def child(a):
    import torch

    lab = Labels(torch)
    if a.child == "trainer":
        from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

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

        class Labelling(TrainerCallback):
            def on_step_begin(self, args, state, control, model=None, **kw):
                lab.tag_all(model.parameters(), "PARAMETER")

            def on_pre_optimizer_step(self, args, state, control, model=None, **kw):
                lab.tag_all((p.grad for p in model.parameters() if p.grad is not None), "GRADIENT")

            def on_optimizer_step(self, args, state, control, optimizer=None, **kw):
                if optimizer is not None:
                    lab.tag_optimizer(optimizer)

        model.register_forward_pre_hook(lambda m, args, kwargs: lab.tag_inputs((args, kwargs)), with_kwargs=True)
        args = TrainingArguments(output_dir=tempfile.mkdtemp(prefix="mo-"), max_steps=a.steps,
                                 per_device_train_batch_size=batch, logging_strategy="no", save_strategy="no",
                                 report_to="none", disable_tqdm=True, dataloader_num_workers=0, seed=0, bf16=True)
        trainer = Trainer(model=model, args=args, train_dataset=Data(), callbacks=[Labelling()])
        with lab.activations():
            trainer.train()
        keep = (model, trainer)
    else:
        sys.path.insert(0, os.path.join(ROOT, "agent", "tools"))
        from train_seed import small_llm

        model = small_llm()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        with lab.activations():
            for _ in range(a.steps):
                lab.tag_all(model.parameters(), "PARAMETER")
                x = torch.randint(0, 100, (4, 256), device="cuda")
                lab.tag(x, "INPUT")
                loss = torch.mean(model(x).logits)
                loss.backward()
                lab.tag_all((p.grad for p in model.parameters()), "GRADIENT")
                opt.step()
                lab.tag_optimizer(opt)
                opt.zero_grad()
        keep = (model, opt)
    torch.cuda.synchronize()
    lab.write(a.labels)
    ms = torch.cuda.memory_stats()
    agent = sys.modules.get("memscope_agent")
    st = {"labels": len(lab.rows), "requested_peak": ms.get("requested_bytes.all.peak"), "torch": torch.__version__,
          "gpu": torch.cuda.get_device_name(0)}
    if agent is not None and agent.running() is not None and hasattr(agent.running().source, "stats"):
        st["tracker"] = agent.running().source.stats()
    with open(a.stats, "w") as f:
        json.dump(st, f)
    KEEP.append(keep)
    return 0


KEEP = []


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?")
    p.add_argument("--agent", default=os.path.join(ROOT, "agent"))
    p.add_argument("--loops", default="trainer,qwen")
    p.add_argument("--modes", default="agent,markers")
    p.add_argument("--trainer-steps", type=int, default=5)
    p.add_argument("--qwen-steps", type=int, default=4)
    p.add_argument("--child", choices=["trainer", "qwen"])
    p.add_argument("--steps", type=int)
    p.add_argument("--labels")
    p.add_argument("--stats")
    a = p.parse_args()
    if a.child:
        return child(a)
    if not a.out:
        p.error("OUTDIR is required")
    os.makedirs(a.out, exist_ok=True)
    sys.path.insert(0, HERE)
    import agent_overhead as ao

    agent_dir = os.path.abspath(a.agent)
    summary = {}
    for loop in a.loops.split(","):
        for mode in a.modes.split(","):
            name = "%s_%s" % (loop, mode)
            tmp = tempfile.mkdtemp(prefix="mo-run-")
            sock = os.path.join(tmp, "a.sock")
            env = dict(os.environ, PYTHONUNBUFFERED="1", MEMSCOPE_AGENT_QUIET="1", TOKENIZERS_PARALLELISM="false",
                       MEMSCOPE_AGENT="1", MEMSCOPE_AGENT_SOCKET=sock, MEMSCOPE_AGENT_MODE="tracker",
                       PYTHONPATH=agent_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
            if mode == "markers":
                env["MEMSCOPE_AGENT_MARKERS"] = "1"
            stats = os.path.join(tmp, "stats.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--child", loop, "--steps",
                   str(a.trainer_steps if loop == "trainer" else a.qwen_steps),
                   "--labels", os.path.join(a.out, name + ".labels.csv"), "--stats", stats]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            stream = ao.Stream(agent_dir, sock, os.path.join(a.out, name + ".mscp"))
            log, _ = proc.communicate(timeout=300)
            stream.thread.join(60)
            r = {"rc": proc.returncode, "process_s": round(time.perf_counter() - t0, 1)}
            try:
                with open(stats) as f:
                    r.update(json.load(f))
            except (OSError, ValueError):
                r["log"] = log[-3000:]
            if stream.error:
                r["stream_error"] = stream.error
            else:
                sc = ao.scan(agent_dir, stream.path)
                end = sc["end"] or {}
                r["stream"] = {k: sc[k] for k in ("events", "bytes", "events_with_stack", "annotations", "errors",
                                                  "received_peak")}
                r["stream"]["dropped"] = end.get("dropped")
                r["stream"]["peak_equal"] = sc["received_peak"] == (
                    ((end.get("memory_stats") or {}).get("0") or {}).get("requested_bytes.all.peak"))
            if proc.returncode != 0:
                r["log"] = log[-3000:]
            with open(os.path.join(a.out, name + ".stats.json"), "w") as f:
                json.dump(r, f, indent=1)
            summary[name] = {k: v for k, v in r.items() if k != "log"}
            print(name, json.dumps(r), flush=True)
    with open(os.path.join(a.out, "markers_oracle.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
