"""Truth for sharded training (the issue "Will it fit on N GPUs?"): one decoder trained the same
way on one GPU and sharded over the GPUs of one host, every rank recorded.

    python3 record_shard_truth.py OUTDIR single
    torchrun --standalone --nproc_per_node N record_shard_truth.py OUTDIR MODE

MODE: single (one GPU, no process group: the base a prediction starts from), ddp
(DistributedDataParallel, AdamW foreach), zero1 (DDP and torch's ZeroRedundancyOptimizer over
AdamW: ZeRO-1) or fsdp2 (fully_shard on each decoder layer and at the root, AdamW foreach).
Each rank trains 3 steps on its own batch (8 x 512 tokens: data parallel, the per-rank batch of
the single run), from an empty allocator, with torch.cuda.memory._record_memory_history
(stacks="python") from before the model is built. Writes OUTDIR/MODE_wN/rank<R>.pickle and
OUTDIR/MODE_wN/rank<R>.json (torch's max_memory_allocated / max_memory_reserved of the rank,
its requested peak, the model's parameter count).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

OUT, MODE = sys.argv[1], sys.argv[2]
# SHARD_MODEL=gpt2: a GPT-2 small instead (124M, its head tied to its embedding, 12 layers),
# held out from the model's first fitting; SHARD_CKPT=1: transformers' own checkpointing of
# every layer (non-reentrant) under the sharding
MODEL = os.environ.get("SHARD_MODEL", "qwen")
CKPT = os.environ.get("SHARD_CKPT") == "1"
BATCH, SEQ, STEPS = 8, 512, 3
VOCAB = 50257 if MODEL == "gpt2" else 32000


def build():
    from transformers import AutoModelForCausalLM, GPT2Config, Qwen2Config

    if MODEL == "gpt2":
        cfg = GPT2Config(vocab_size=VOCAB, n_embd=768, n_layer=12, n_head=12, n_positions=1024)
    else:
        cfg = Qwen2Config(vocab_size=VOCAB, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                          num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048,
                          tie_word_embeddings=False)
    cfg.use_cache = False
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(cfg).to("cuda")
    if CKPT:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return m


def layers(m):
    return m.transformer.h if MODEL == "gpt2" else m.model.layers


def main():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if MODE != "single":
        import torch.distributed as dist

        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    # warm-up outside the recording: the context, cuBLAS, the communicator's first collective
    w = torch.randn(256, 256, device="cuda", requires_grad=True)
    (w @ w).sum().backward()
    if MODE != "single":
        t = torch.ones(1, device="cuda")
        dist.all_reduce(t)
        del t
    del w
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
    m = build()
    m.train()
    n_params = sum(p.numel() for p in m.parameters())
    if MODE in ("ddp", "zero1"):
        from torch.nn.parallel import DistributedDataParallel

        m = DistributedDataParallel(m, device_ids=[local])
    if MODE == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in layers(m):
            fully_shard(layer)
        fully_shard(m)
    if MODE == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer

        opt = ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-4, foreach=True)
    else:
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
    g = torch.Generator(device="cuda")
    g.manual_seed(1 + rank)
    for _ in range(STEPS):
        ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda", generator=g)
        x, y = ids[:, :-1], ids[:, 1:]
        logits = m(input_ids=x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        del logits
        loss.backward()
        del loss, ids, x, y
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    prefix = "" if MODEL == "qwen" else MODEL + "_"
    d = os.path.join(OUT, "%s%s%s_w%d" % (prefix, MODE, "_ckpt" if CKPT else "", world))
    os.makedirs(d, exist_ok=True)
    torch.cuda.memory._dump_snapshot(os.path.join(d, "rank%d.pickle" % rank))
    torch.cuda.memory._record_memory_history(enabled=None)
    res = {"model": MODEL, "checkpointing": CKPT, "mode": MODE, "world": world, "rank": rank, "batch_per_rank": BATCH,
           "seq": SEQ, "steps": STEPS, "params": n_params, "max_allocated": torch.cuda.max_memory_allocated(),
           "max_reserved": torch.cuda.max_memory_reserved(), "requested_peak": stats.get("requested_bytes.all.peak", 0),
           "torch": torch.__version__, "device": torch.cuda.get_device_name(local)}
    with open(os.path.join(d, "rank%d.json" % rank), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res), flush=True)
    if MODE != "single":
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
