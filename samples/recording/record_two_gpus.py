"""Record a real snapshot of one process training on two GPUs (run on a 2-GPU machine).

    python3 record_two_gpus.py OUTDIR

A 16-block MLP split in two (blocks 0-7 on cuda:0, 8-15 on cuda:1, pipeline style), AdamW,
4 steps of batch 512 x 2048. torch records every device's allocator in one history, so
the snapshot has two device traces and segments on both devices. Writes
OUTDIR/two_gpus.pickle and OUTDIR/two_gpus.stats.json with torch's counters per device
("devices": [{"device", "requested_peak", "max_reserved", "memory_stats"}, ...]).
"""
import json
import os
import sys

import torch
from torch import nn

out = sys.argv[1]
assert torch.cuda.device_count() >= 2, "needs two GPUs"


def blocks(n, width, device):
    layers = []
    for _ in range(n):
        layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
    return nn.Sequential(*layers).to(device)


torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
torch.manual_seed(0)
first = blocks(8, 2048, "cuda:0")
second = blocks(8, 2048, "cuda:1")
opt = torch.optim.AdamW(list(first.parameters()) + list(second.parameters()), lr=1e-4)
for step in range(4):
    x = torch.randn(512, 2048, device="cuda:0")
    target = torch.randn(512, 2048, device="cuda:1")
    hidden = first(x)
    y = second(hidden.to("cuda:1"))
    loss = nn.functional.mse_loss(y, target)
    loss.backward()
    opt.step()
    opt.zero_grad()
for d in range(2):
    torch.cuda.synchronize(d)
torch.cuda.memory._dump_snapshot(os.path.join(out, "two_gpus.pickle"))
torch.cuda.memory._record_memory_history(enabled=None)
devices = []
for d in range(2):
    ms = torch.cuda.memory_stats(d)
    devices.append({"device": d, "requested_peak": ms.get("requested_bytes.all.peak"),
                    "max_allocated": torch.cuda.max_memory_allocated(d), "max_reserved": torch.cuda.max_memory_reserved(d),
                    "memory_stats": ms})
json.dump({"scenario": "two_gpus", "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "devices": devices},
          open(os.path.join(out, "two_gpus.stats.json"), "w"), indent=1)
print("two_gpus", [(d["device"], d["requested_peak"], d["max_reserved"]) for d in devices])
