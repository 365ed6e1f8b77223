"""Record a real snapshot of one of the mistakes memscope diagnoses, with the truth (run on a GPU).

    python3 record_diagnose.py SCENARIO OUTDIR

Writes OUTDIR/SCENARIO.pickle (torch.cuda.memory._dump_snapshot, stacks="python"),
SCENARIO.stats.json (torch's counters, like record_oracle.py) and SCENARIO.truth.json: what
the program knows it did, for checking memscope's diagnoses on runs its detectors were not
tuned on:

  growth                 the loop keeps memory from one step to the next
  retained_per_step      torch's requested_bytes.all.current after each step; the true
                         growth is the median of its step-to-step differences
  missing_no_grad        forward passes with autograd on and no backward
  oom                    the run ended in torch.OutOfMemoryError (caught, then dumped)
  cache_released         torch.cuda.empty_cache() handed segments back
  keep_line              the source line (this file) of the statement that keeps tensors

Scenarios (each a fresh process; models built from code, nothing downloaded):
  train_keep_logits   4-layer Qwen2-style LM, AdamW, batch 4: every step's logits kept in a list
  eval_accumulate     resnet18 eval() without no_grad: total = total + loss (keeps each graph)
  eval_no_nograd      resnet18 eval() without no_grad, accuracy read with .item(): no growth
  eval_inference_cpu  resnet18 under inference_mode, outputs moved .cpu(): healthy
  train_hook_leak     8-layer MLP, SGD: a forward hook appends each block's output to a list
  train_fused_adam    48-layer MLP, Adam(fused=True), 8 steps: healthy
  train_oom           the LM at batch 24 under set_per_process_memory_fraction: OOM in a step
  release_after_train MLP trained 3 steps, then del, gc.collect(), empty_cache()
"""
import gc
import inspect
import json
import os
import sys

import torch
from torch import nn

scenario, out = sys.argv[1], sys.argv[2]
truth = {"scenario": scenario, "growth": False, "missing_no_grad": False, "oom": False,
         "cache_released": False, "retained_per_step": [], "keep_line": None}
requested = []


def here():
    return inspect.currentframe().f_back.f_lineno


def mark_step():
    torch.cuda.synchronize()
    requested.append(torch.cuda.memory_stats()["requested_bytes.all.current"])


def small_llm(layers=4, hidden=1024, vocab=32000):
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=16, num_key_value_heads=8,
                      max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg).to("cuda")


def resnet():
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None, num_classes=100).to("cuda")


def mlp(depth, width):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
    return nn.Sequential(*layers).to("cuda")


torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")

if scenario == "train_keep_logits":
    model = small_llm()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    kept = []
    for step in range(6):
        x = torch.randint(0, 100, (4, 256), device="cuda")
        logits = model(x).logits
        kept.append(logits); truth["keep_line"] = here()
        torch.mean(logits).backward()
        opt.step()
        opt.zero_grad()
        mark_step()
    truth["growth"] = True

elif scenario == "eval_accumulate":
    model = resnet().eval()
    total = torch.zeros((), device="cuda")
    for step in range(6):
        x = torch.randn(32, 3, 224, 224, device="cuda")
        y = torch.randint(0, 100, (32,), device="cuda")
        total = total + nn.functional.cross_entropy(model(x), y); truth["keep_line"] = here()
        mark_step()
    print("mean loss", (total / 6).item())
    truth["growth"] = True
    truth["missing_no_grad"] = True

elif scenario == "eval_no_nograd":
    model = resnet().eval()
    correct = 0
    for step in range(6):
        x = torch.randn(64, 3, 224, 224, device="cuda")
        y = torch.randint(0, 100, (64,), device="cuda")
        correct += (model(x).argmax(1) == y).sum().item()
        mark_step()
    truth["missing_no_grad"] = True

elif scenario == "eval_inference_cpu":
    model = resnet().eval()
    outputs = []
    with torch.inference_mode():
        for step in range(6):
            x = torch.randn(64, 3, 224, 224, device="cuda")
            outputs.append(model(x).to("cpu"))
            mark_step()

elif scenario == "train_hook_leak":
    model = mlp(8, 2048)
    feats = []

    def keep(module, inputs, output):
        feats.append(output); truth["keep_line"] = here()

    for block in range(0, len(model), 3):
        model[block + 2].register_forward_hook(keep)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for step in range(8):
        x = torch.randn(256, 2048, device="cuda")
        loss = nn.functional.mse_loss(model(x), torch.zeros_like(x))
        loss.backward()
        opt.step()
        opt.zero_grad()
        mark_step()
    truth["growth"] = True

elif scenario == "train_fused_adam":
    model = mlp(48, 1024)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    for step in range(8):
        x = torch.randn(128, 1024, device="cuda")
        loss = nn.functional.mse_loss(model(x), x)
        loss.backward()
        opt.step()
        opt.zero_grad()
        mark_step()

elif scenario == "train_oom":
    model = small_llm()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    # Parameters and AdamW state fit; the activations of batch 24 x 512 do not.
    budget = 6 * 2**30
    torch.cuda.set_per_process_memory_fraction(budget / torch.cuda.get_device_properties(0).total_memory)
    try:
        for step in range(3):
            x = torch.randint(0, 100, (24, 512), device="cuda")
            torch.mean(model(x).logits).backward()
            opt.step()
            opt.zero_grad()
            mark_step()
    except torch.OutOfMemoryError as e:
        truth["oom"] = True
        truth["oom_message"] = str(e).splitlines()[0]
    truth["budget_bytes"] = budget

elif scenario == "release_after_train":
    model = mlp(8, 4096)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(512, 4096, device="cuda")
        nn.functional.mse_loss(model(x), x).backward()
        opt.step()
        opt.zero_grad()
        mark_step()
    reserved_before = torch.cuda.memory_reserved()
    del model, opt, x
    gc.collect()
    torch.cuda.empty_cache()
    truth["cache_released"] = True
    truth["reserved_before_release"] = reserved_before
    truth["reserved_after_release"] = torch.cuda.memory_reserved()

else:
    raise SystemExit("unknown scenario " + scenario)

torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(os.path.join(out, scenario + ".pickle"))
torch.cuda.memory._record_memory_history(enabled=None)
truth["retained_per_step"] = [b - a for a, b in zip(requested, requested[1:])]
truth["requested_after_step"] = requested
truth["steps"] = len(requested)
ms = torch.cuda.memory_stats()
json.dump(truth, open(os.path.join(out, scenario + ".truth.json"), "w"), indent=1)
json.dump({"scenario": scenario, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved(),
           "requested_peak": ms.get("requested_bytes.all.peak"), "memory_stats": ms},
          open(os.path.join(out, scenario + ".stats.json"), "w"), indent=1)
print(scenario, "steps", len(requested), "retained/step", truth["retained_per_step"][:6],
      "max_alloc MiB %.1f" % (torch.cuda.max_memory_allocated() / 2**20))
