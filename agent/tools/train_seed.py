"""The seed training loops used to validate live attach on a GPU (docs/LIVE.md).

    python3 train_seed.py qwen|many_small --steps N [--batch B] [--record] --dump SNAP --stats JSON

qwen: a Qwen2-style causal LM built from a config (8 layers, hidden 1024, vocab 32000),
AdamW, loss = mean(logits). many_small: a 144-layer MLP (Linear/GELU/LayerNorm at
width 512), Adam: many small allocations. --record turns on torch's own memory history
(the run without the agent); under the agent it is already on. At the end the process
takes its own torch.cuda.memory._snapshot() (the reference trace) and its counters.
"""

import argparse
import json
import pickle
import statistics
import time

import torch
from torch import nn


def small_llm(layers=8, hidden=1024, vocab=32000):
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=16, num_key_value_heads=8,
                      max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg).to("cuda")


KEEP = []  # the model stays alive past main(): its frees would come after the reference snapshot


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=["qwen", "many_small"])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--record", action="store_true")
    p.add_argument("--record-stacks", default="python", help="(ignored under the agent, which records with its own)")
    p.add_argument("--dump")
    p.add_argument("--stats")
    a = p.parse_args()
    if a.record:
        import sys

        torch.cuda.memory._record_memory_history(max_entries=sys.maxsize, stacks=a.record_stacks)
    if a.model == "qwen":
        batch = a.batch or 16
        model = small_llm()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def step_fn():
            x = torch.randint(0, 100, (batch, 256), device="cuda")
            loss = torch.mean(model(x).logits)
            loss.backward()
            opt.step()
            opt.zero_grad()
    else:
        batch = a.batch or 64
        layers = []
        for _ in range(48):
            layers += [nn.Linear(512, 512), nn.GELU(), nn.LayerNorm(512)]
        model = nn.Sequential(*layers).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)

        def step_fn():
            x = torch.randn(batch, 512, device="cuda")
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()

    times = []
    torch.cuda.synchronize()
    t_loop = time.perf_counter()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step_fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    loop_s = time.perf_counter() - t_loop
    KEEP.append((model, opt, step_fn))
    snap = torch.cuda.memory._snapshot()
    ms = torch.cuda.memory_stats()
    events = sum(len(t) for t in snap["device_traces"])
    stats = {"model": a.model, "batch": batch, "steps": a.steps, "step_s": times,
             "median_step_s": statistics.median(times[2:] if len(times) > 4 else times), "loop_s": loop_s,
             "requested_peak": ms.get("requested_bytes.all.peak"), "reserved_peak": ms.get("reserved_bytes.all.peak"),
             "trace_events": events, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(stats, f)
    if a.dump:
        with open(a.dump, "wb") as f:
            pickle.dump(snap, f, protocol=4)
    print("%s: %d steps, median step %.2f ms, %d trace events, requested peak %.1f MiB" %
          (a.model, a.steps, stats["median_step_s"] * 1e3, events, stats["requested_peak"] / 2**20), flush=True)


if __name__ == "__main__":
    main()
