"""Record real snapshots that carry the newer fields (run on a CUDA GPU, torch >= 2.4).

    python3 record_fields.py SCENARIO OUTDIR

Each run is one fresh process that starts the allocator history before it builds anything,
trains a small MLP a few steps and writes OUTDIR/NAME.pickle and OUTDIR/NAME.stats.json
(torch's counters and what ran, under "meta"). Every option of `_record_memory_history`
that this torch has among compile_context, record_pinned_host_memory and
global_record_annotations is turned on (the stats say which).

SCENARIO:
  graph      whole-step CUDA graph capture (torch.cuda.graph, capturable Adam), replayed:
             the graph's private pool (pool_id / segment_pool_id)
  mempool    torch.cuda.MemPool + use_mem_pool around the activations of each step
  compile_ro torch.compile(mode="reduce-overhead"): CUDA graph trees, Inductor frames,
             compile_context
  metadata   torch.cuda.memory._set_memory_metadata per phase, _annotate_tensor where it
             exists, pinned host batches (pin_memory=True, non_blocking copies)
"""
import argparse
import inspect
import json
import os
import time

import torch
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("scenario", choices=["graph", "mempool", "compile_ro", "metadata"])
ap.add_argument("out")
ap.add_argument("--steps", type=int, default=4)
a = ap.parse_args()
name = "fields_" + a.scenario
os.makedirs(a.out, exist_ok=True)
mm = torch.cuda.memory
sig = inspect.signature(mm._record_memory_history).parameters
kw = {"max_entries": 1_000_000, "stacks": "python"}
turned_on = []
for opt in ("compile_context", "record_pinned_host_memory", "global_record_annotations"):
    if opt in sig:
        kw[opt] = True
        turned_on.append(opt)
meta = {"scenario": a.scenario, "steps": a.steps, "record_options": turned_on,
        "has": {k: hasattr(mm, k) for k in ("_set_memory_metadata", "_annotate_tensor")}}
torch.manual_seed(0)
mm._record_memory_history(**kw)


def mlp(width=1024, depth=6):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
    return nn.Sequential(*layers, nn.Linear(width, 16)).cuda()


def set_meta(text):
    if hasattr(mm, "_set_memory_metadata"):
        mm._set_memory_metadata(text)


B, W = 256, 1024
model = mlp(W)
notes = []

if a.scenario == "graph":
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    static_x = torch.randn(B, W, device="cuda")
    static_y = torch.randint(0, 16, (B,), device="cuda")
    loss_fn = nn.CrossEntropyLoss()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up on a side stream, as the CUDA-graph docs do
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for _ in range(a.steps):
        static_x.copy_(torch.randn(B, W, device="cuda"))
        static_y.copy_(torch.randint(0, 16, (B,), device="cuda"))
        g.replay()
    torch.cuda.synchronize()
    notes.append("pool of the graph: %s" % (g.pool(),))
elif a.scenario == "mempool":
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    pool = torch.cuda.MemPool()
    for _ in range(a.steps):
        x = torch.randn(B, W, device="cuda")
        y = torch.randint(0, 16, (B,), device="cuda")
        with torch.cuda.use_mem_pool(pool):
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
    # a buffer kept in the pool past the loop: pool memory that is in use at the dump
    with torch.cuda.use_mem_pool(pool):
        kept = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    notes.append("pool id: %s" % (pool.id,))
elif a.scenario == "compile_ro":
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    cmodel = torch.compile(model, mode="reduce-overhead")
    for _ in range(a.steps):
        x = torch.randn(B, W, device="cuda")
        y = torch.randint(0, 16, (B,), device="cuda")
        loss = nn.functional.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
    torch.cuda.synchronize()
elif a.scenario == "metadata":
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    host_x = torch.randn(B, W).pin_memory()
    host_y = torch.randint(0, 16, (B,)).pin_memory()
    for step in range(a.steps):
        set_meta(json.dumps({"step": step, "phase": "forward"}) if step % 2 else "step %d forward" % step)
        x = host_x.to("cuda", non_blocking=True)
        y = host_y.to("cuda", non_blocking=True)
        out = model(x)
        if hasattr(mm, "_annotate_tensor"):
            try:
                mm._annotate_tensor(out, "logits step %d" % step)
            except Exception as e:  # the signature moved between versions
                notes.append("_annotate_tensor: %r" % (e,))
        set_meta("step %d backward" % step)
        nn.functional.cross_entropy(out, y).backward()
        set_meta("step %d optimizer" % step)
        opt.step()
        opt.zero_grad(set_to_none=True)
        set_meta("")
        del out, x, y
    torch.cuda.synchronize()

path = os.path.join(a.out, name + ".pickle")
mm._dump_snapshot(path)
stats = {
    "name": name,
    "torch": torch.__version__,
    "device": torch.cuda.get_device_name(),
    "max_allocated": torch.cuda.max_memory_allocated(),
    "max_reserved": torch.cuda.max_memory_reserved(),
    "memory_stats": {k: v for k, v in torch.cuda.memory_stats().items()},
    "meta": dict(meta, notes=notes, finished=time.time()),
}
with open(os.path.join(a.out, name + ".stats.json"), "w") as f:
    json.dump(stats, f, indent=1, default=str)
print(name, "ok", os.path.getsize(path), "bytes;", notes, turned_on)
