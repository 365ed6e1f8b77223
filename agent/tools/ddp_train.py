"""A 2+-rank DDP training loop for validating live attach under torchrun (docs/LIVE.md).

    torchrun --standalone --nproc_per_node 2 ddp_train.py --steps N --stats DIR [--dump DIR]

Each rank trains a Qwen2-style causal LM built from a config (8 layers, hidden 1024, vocab
32000; transformers' Qwen2Config) under DistributedDataParallel, AdamW, and writes
DIR/rank<R>.json: its step times, torch.cuda.max_memory_allocated / max_memory_reserved,
requested_bytes.all.peak; under the memscope agent (memory history on) also the length of
torch's own trace, and with --dump the trace itself (DIR/rank<R>_reference.pickle) for an
event-by-event comparison with what the agent streamed.
"""

import argparse
import json
import os
import pickle
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

KEEP = []  # alive past the loop: their frees would come after the reference snapshot


def model_for(layers, hidden, vocab):
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=16, num_key_value_heads=8,
                      max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--stats", required=True)
    p.add_argument("--dump")
    a = p.parse_args()
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    # DDP_BACKEND=gloo with more ranks than GPUs shares them (a check on one GPU; NCCL
    # refuses two ranks on one device).
    backend = os.environ.get("DDP_BACKEND", "nccl")
    dev = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    if backend == "nccl":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group(backend)
    model = DDP(model_for(a.layers, a.hidden, 32000).to(dev), device_ids=[dev.index])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device=dev).manual_seed(rank)
    times = []
    for _ in range(a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x = torch.randint(0, 32000, (a.batch, a.seq), device=dev, generator=g)
        loss = model(x).logits.float().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    KEEP.append((model, opt))
    dist.barrier()
    ms = torch.cuda.memory_stats(dev)
    stats = {"rank": rank, "local_rank": local, "device": dev.index, "backend": backend,
             "world_size": dist.get_world_size(), "steps": a.steps,
             "batch": a.batch, "seq": a.seq, "step_s": times, "median_step_s": statistics.median(times[3:] or times),
             "max_memory_allocated": torch.cuda.max_memory_allocated(dev),
             "max_memory_reserved": torch.cuda.max_memory_reserved(dev),
             "requested_bytes.all.peak": ms.get("requested_bytes.all.peak"),
             "torch": torch.__version__, "gpu": torch.cuda.get_device_name(dev),
             "agent": "memscope_agent" in sys.modules and sys.modules["memscope_agent"].running() is not None}
    if stats["agent"]:
        snap = torch.cuda.memory._snapshot()
        trace = snap["device_traces"][dev.index]
        stats["trace_events"] = len(trace)
        if a.dump:
            os.makedirs(a.dump, exist_ok=True)
            with open(os.path.join(a.dump, "rank%d_reference.pickle" % rank), "wb") as f:
                pickle.dump({"device": dev.index, "trace": trace}, f, protocol=4)
    os.makedirs(a.stats, exist_ok=True)
    with open(os.path.join(a.stats, "rank%d.json" % rank), "w") as f:
        json.dump(stats, f)
    print("rank %d: median step %.2f ms, max allocated %d, max reserved %d" %
          (rank, stats["median_step_s"] * 1e3, stats["max_memory_allocated"], stats["max_memory_reserved"]), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
