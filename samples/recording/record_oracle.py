"""Record a real allocator snapshot with exact category labels (run on a CUDA GPU).

    python3 record_oracle.py NAME MODEL BATCH STACKS OUTDIR [--steps N] [--max-entries N]
                             [--amp] [--checkpointing] [--inference] [--late-start]

MODEL: qwen | qwen4 | cnn | mlp | deepmlp. STACKS: python | all.

Extends ../shared/tools/record_oracle.py (same labels, same join rule). It records the
allocator history like the seed articles do, and labels storages from the program's own
knowledge, with the time they were seen:
  PARAMETER        every p of model.parameters() (and buffers), each step
  INPUT            the batch tensors (inputs and targets)
  ACTIVATION       every tensor autograd saves for backward (saved_tensors_hooks)
  GRADIENT         every p.grad after backward
  OPTIMIZER_STATE  every tensor in optimizer.state after step
Writes NAME.pickle, NAME.labels.csv (t_us, ptr, nbytes, label) and NAME.stats.json
(torch's own counters: memory_stats, max_reserved).
--inference: eval() loop under torch.no_grad(), no backward or optimizer.
--late-start: recording starts after the model and optimizer exist (pre-existing blocks).
--no-labels: the plain seed loop (no saved_tensors_hooks, no .labels.csv), as llm_bs16 was recorded.
--cap-gib G: torch.cuda.set_per_process_memory_fraction(G GiB / the device's memory) first; an
  OutOfMemoryError ends the loop, the snapshot (with its oom entry) is still written, and
  stats.json says "oom": true and where ("oom_at").
stats.json also holds the allocator settings as torch wrote them into the snapshot
("allocator_settings") and PYTORCH_CUDA_ALLOC_CONF ("alloc_conf").
"""
import argparse
import contextlib
import csv
import json
import os
import pickle
import time

import torch
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("name")
ap.add_argument("model")
ap.add_argument("batch", type=int)
ap.add_argument("stacks")
ap.add_argument("out")
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--max-entries", type=int, default=1_000_000)
ap.add_argument("--amp", action="store_true")
ap.add_argument("--checkpointing", action="store_true")
ap.add_argument("--inference", action="store_true")
ap.add_argument("--late-start", action="store_true")
ap.add_argument("--optimizer", default="adamw")
ap.add_argument("--no-labels", action="store_true")
ap.add_argument("--cap-gib", type=float)
a = ap.parse_args()
labels = []
oom_at = None


def now_us():
    return time.time_ns() // 1000


def tag(t, label):
    if not a.no_labels and isinstance(t, torch.Tensor) and t.is_cuda:
        st = t.untyped_storage()
        labels.append((now_us(), st.data_ptr(), st.nbytes(), label))


def small_llm(layers=8, hidden=1024, vocab=32000):
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=16, num_key_value_heads=8,
                      max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(cfg).to("cuda")
    if a.checkpointing:
        m.gradient_checkpointing_enable()
        m.config.use_cache = False
    return m


def make():
    b = a.batch
    if a.model in ("qwen", "qwen4"):
        m = small_llm(layers=8 if a.model == "qwen" else 4)
        return m, lambda: (torch.randint(0, 100, (b, 256), device="cuda"),), lambda m, x: torch.mean(m(x[0]).logits)
    if a.model == "cnn":
        import torchvision
        torch.manual_seed(0)
        m = torchvision.models.resnet18(weights=None, num_classes=100).to("cuda")
        return (m, lambda: (torch.randn(b, 3, 224, 224, device="cuda"), torch.randint(0, 100, (b,), device="cuda")),
                lambda m, x: nn.functional.cross_entropy(m(x[0]), x[1]))
    if a.model in ("mlp", "deepmlp"):
        torch.manual_seed(0)
        depth, width = (8, 4096) if a.model == "mlp" else (144, 512)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
        m = nn.Sequential(*layers).to("cuda")
        return (m, lambda: (torch.randn(b, width, device="cuda"), torch.randn(b, width, device="cuda")),
                lambda m, x: nn.functional.mse_loss(m(x[0]), x[1]))
    raise SystemExit("unknown model " + a.model)


def make_opt(model):
    if a.optimizer == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=1e-3)
    if a.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    if a.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    raise SystemExit("unknown optimizer " + a.optimizer)


def tag_params(model):
    for p in model.parameters():
        tag(p, "PARAMETER")
    for buf in model.buffers():
        tag(buf, "PARAMETER")


if a.cap_gib:
    torch.cuda.set_per_process_memory_fraction(a.cap_gib * 2**30 / torch.cuda.get_device_properties(0).total_memory)
if not a.late_start:
    torch.cuda.memory._record_memory_history(max_entries=a.max_entries, stacks=a.stacks)
model, make_input, loss_fn = make()
opt = None if a.inference else make_opt(model)
if a.late_start:
    torch.cuda.memory._record_memory_history(max_entries=a.max_entries, stacks=a.stacks)
torch.cuda.reset_peak_memory_stats()
t0 = time.time()


def run_loop():
    if a.inference:
        model.eval()
        with torch.no_grad():
            for step in range(a.steps):
                tag_params(model)
                x = make_input()
                for t in x:
                    tag(t, "INPUT")
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.amp):
                    y = loss_fn(model, x)
                del y
    else:
        with (contextlib.nullcontext() if a.no_labels else
              torch.autograd.graph.saved_tensors_hooks(lambda t: (tag(t, "ACTIVATION"), t)[1], lambda t: t)):
            for step in range(a.steps):
                tag_params(model)
                x = make_input()
                for t in x:
                    tag(t, "INPUT")
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.amp):
                    loss = loss_fn(model, x)
                loss.backward()
                for p in model.parameters():
                    tag(p.grad, "GRADIENT")
                opt.step()
                for state in opt.state.values():
                    for v in state.values():
                        tag(v, "OPTIMIZER_STATE")
                opt.zero_grad()


try:
    run_loop()
except torch.OutOfMemoryError as e:
    if not a.cap_gib:
        raise
    oom_at = str(e).split("\n")[0][:300]
    print("OOM:", oom_at, flush=True)
try:
    torch.cuda.synchronize()
except Exception as e:
    print("synchronize:", e, flush=True)
run_s = time.time() - t0
pickle_path = os.path.join(a.out, a.name + ".pickle")
torch.cuda.memory._dump_snapshot(pickle_path)
torch.cuda.memory._record_memory_history(enabled=None)
try:
    with open(pickle_path, "rb") as f:  # our own file, just written
        allocator_settings = pickle.load(f).get("allocator_settings")
except Exception as e:
    allocator_settings = {"error": repr(e)}
if not a.no_labels:
    with open(os.path.join(a.out, a.name + ".labels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_us", "ptr", "nbytes", "label"])
        w.writerows(labels)
ms = torch.cuda.memory_stats()
json.dump({"scenario": a.name, "model": a.model, "batch": a.batch, "stacks": a.stacks, "steps": a.steps,
           "amp": a.amp, "checkpointing": a.checkpointing, "inference": a.inference, "late_start": a.late_start,
           "optimizer": a.optimizer, "max_entries": a.max_entries, "labelled": not a.no_labels,
           "cap_gib": a.cap_gib, "oom": oom_at is not None, "oom_at": oom_at,
           "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "allocator_settings": allocator_settings,
           "end_reserved": torch.cuda.memory_reserved(),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved(),
           "requested_peak": ms.get("requested_bytes.all.peak"), "labels": len(labels), "run_s": run_s,
           "memory_stats": ms},
          open(os.path.join(a.out, a.name + ".stats.json"), "w"), indent=1)
print(a.name, "labels", len(labels), "max_alloc MiB %.1f" % (torch.cuda.max_memory_allocated() / 2**20), "run_s %.1f" % run_s)
