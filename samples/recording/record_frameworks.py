"""Record real training inside frameworks, labelled from their own hooks (run on a CUDA GPU).

    python3 record_frameworks.py SCENARIO OUTDIR [--name NAME] [--steps N]

Each run is one fresh process: the allocator history starts before the model is built
(Labeller, stacks="python"), the framework trains a few steps on random tokens, and the run
writes NAME.pickle, NAME.labels.csv and NAME.stats.json (with a "meta" dict of what ran).
Labels follow labeller.py / RECORDING.md: PARAMETER, INPUT, ACTIVATION (saved for backward),
GRADIENT, OPTIMIZER_STATE; EMA weights are labelled PARAMETER (a second copy of the weights).

Model: a small Qwen2-style causal LM built from a config (4 layers, hidden 512, vocab 8192),
batch 4 x 128 tokens, AdamW, unless the scenario says otherwise.

SCENARIO:
  pl_auto          PyTorch Lightning, automatic optimization (forward and backward run inside
                   optimizer.step(closure)), fp32
  pl_auto_bf16     same, precision="bf16-mixed"
  pl_auto_clip     same, gradient_clip_val=1.0
  pl_auto_accum2   same, accumulate_grad_batches=2 (only every second closure runs inside a step)
  pl_manual        Lightning manual optimization (zero_grad, manual_backward, opt.step())
  lbfgs            torch.optim.LBFGS(max_iter=3, history_size=5) with a closure, plain loop, 2 layers
  closure_adam     Adam with opt.step(closure), plain loop
  hf_trainer       Hugging Face Trainer: bf16, gradient_accumulation_steps=2, max_grad_norm=1.0
  compile_mlp      torch.compile'd MLP (8 x Linear/GELU/LayerNorm, width 1024), AdamW; no
                   activation labels (saved_tensors_hooks are not installed)
  compile_mlp_acts same, with the saved_tensors_hooks installed (label what fires)
  compile_qwen     torch.compile'd small LM, AdamW; no activation labels
  frozen_adapter   peft LoRA (r=8 on q/k/v/o) on the frozen small LM, plain loop, AdamW on the adapters
  accum_plain      gradient accumulation in a plain loop (2 micro-batches per optimizer step)
  ema              plain loop plus EMA weights (torch._foreach_lerp_ after each step)
  pl_gpt_loss_outside_bf16
                   Lightning, bf16-mixed, a GPT-2 model (4 layers, n_embd 512, vocab 32768) whose
                   loss is computed in training_step (F.cross_entropy on the logits), not in the
                   model's forward
  pl_gpt_loss_outside_32
                   same, 32-true
  loss_outside_plain
                   plain loop, the small LM, fp32, the loss computed outside the model's forward
"""
import argparse
import copy
import os
import sys
import tempfile
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labeller import Labeller  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("scenario")
ap.add_argument("out")
ap.add_argument("--name")
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--vocab", type=int, default=8192)
a = ap.parse_args()
name = a.name or "fw_" + a.scenario
SEQ, VOCAB = 128, a.vocab
lab = Labeller(name, a.out)
meta = {"scenario": a.scenario, "steps": a.steps, "batch": a.batch, "seq": SEQ, "argv": sys.argv[1:]}


def small_lm(layers=4, hidden=512, device="cuda"):
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(vocab_size=VOCAB, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=8, num_key_value_heads=4,
                      max_position_embeddings=1024, tie_word_embeddings=False, use_cache=False)
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(cfg).float()
    meta["model"] = "qwen2 layers=%d hidden=%d vocab=%d" % (layers, hidden, VOCAB)
    return m.to(device) if device else m


def gpt(layers=4, hidden=512):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=hidden, n_layer=layers, n_head=8,
                     use_cache=False)
    torch.manual_seed(0)
    meta["model"] = "gpt2 layers=%d n_embd=%d vocab=%d" % (layers, hidden, VOCAB)
    return GPT2LMHeadModel(cfg)


def loss_outside(model, x):
    # The loss of a custom training_step or loop: cross-entropy on the logits, outside forward.
    logits = model(input_ids=x).logits
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), x[:, 1:].reshape(-1))


def tokens(n=None):
    return torch.randint(0, VOCAB, (n or a.batch, SEQ), device="cuda")


def lm_loss(model, x):
    return model(input_ids=x, labels=x).loss


def tag_step_start(model, x):
    lab.tag_params(model)
    lab.tag_inputs(x)


# ---------------------------------------------------------------- PyTorch Lightning
def lightning(precision="32-true", clip=None, accum=1, manual=False, outside=False):
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl
    meta.update(framework="lightning " + pl.__version__, precision=precision, gradient_clip_val=clip,
                accumulate_grad_batches=accum, manual_optimization=manual, loss_outside_forward=outside)
    step_loss = loss_outside if outside else lm_loss

    class LitLM(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = gpt() if outside else small_lm(device=None)  # Lightning moves it to the GPU
            self.automatic_optimization = not manual

        def training_step(self, batch, i):
            tag_step_start(self, batch)
            if self.automatic_optimization:
                return step_loss(self.model, batch)
            opt = self.optimizers()
            opt.zero_grad()
            loss = step_loss(self.model, batch)
            self.manual_backward(loss)
            lab.tag_grads(self)
            opt.step()
            lab.tag_optimizer(opt)
            return loss.detach()

        def on_after_backward(self):
            lab.tag_grads(self)

        def on_before_optimizer_step(self, optimizer):
            lab.tag_grads(self)

        def on_train_batch_end(self, outputs, batch, i):
            for o in self.trainer.optimizers:
                lab.tag_optimizer(o)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    data = torch.randint(0, VOCAB, (a.batch * a.steps * accum + a.batch, SEQ))
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=False)
    kw = dict(accelerator="gpu", devices=1, max_steps=a.steps, precision=precision, logger=False,
              enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
              num_sanity_val_steps=0, limit_val_batches=0, default_root_dir=tempfile.mkdtemp())
    if clip is not None:
        kw["gradient_clip_val"] = clip
    if accum > 1:
        kw["accumulate_grad_batches"] = accum
    trainer = pl.Trainer(**kw)
    module = LitLM()
    with lab.activations():
        trainer.fit(module, loader)


# ---------------------------------------------------------------- plain loops with a closure
def lbfgs():
    model = small_lm(layers=2, hidden=256)
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3, history_size=5)
    meta.update(framework="plain loop", optimizer="LBFGS(lr=0.5, max_iter=3, history_size=5)")
    with lab.activations():
        for step in range(a.steps):
            x = tokens()
            tag_step_start(model, x)

            def closure():
                opt.zero_grad()
                loss = lm_loss(model, x)
                loss.backward()
                lab.tag_grads(model)
                return loss

            opt.step(closure)
            lab.tag_optimizer(opt)


def closure_adam():
    model = small_lm()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    meta.update(framework="plain loop", optimizer="Adam, opt.step(closure)")
    with lab.activations():
        for step in range(a.steps):
            x = tokens()
            tag_step_start(model, x)

            def closure():
                opt.zero_grad()
                loss = lm_loss(model, x)
                loss.backward()
                lab.tag_grads(model)
                return loss

            opt.step(closure)
            lab.tag_optimizer(opt)


# ---------------------------------------------------------------- Hugging Face Trainer
def hf_trainer():
    import transformers
    from transformers import Trainer, TrainerCallback, TrainingArguments

    accum = 2
    meta.update(framework="transformers Trainer " + transformers.__version__, bf16=True,
                gradient_accumulation_steps=accum, max_grad_norm=1.0)
    model = small_lm()
    data = [{"input_ids": t, "labels": t} for t in torch.randint(0, VOCAB, (a.batch * accum * a.steps + a.batch, SEQ))]

    class Labels(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            lab.tag_params(kw["model"])

        def on_pre_optimizer_step(self, args, state, control, **kw):
            lab.tag_grads(kw["model"])

        def on_optimizer_step(self, args, state, control, **kw):
            lab.tag_optimizer(kw["optimizer"])

        def on_step_end(self, args, state, control, **kw):
            lab.tag_optimizer(kw["optimizer"])

    model.register_forward_pre_hook(lambda m, args, kwargs: lab.tag_inputs((args, kwargs)), with_kwargs=True)
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=a.batch,
                             gradient_accumulation_steps=accum, max_grad_norm=1.0, bf16=True, max_steps=a.steps,
                             learning_rate=1e-3, report_to="none", save_strategy="no", logging_strategy="no",
                             remove_unused_columns=False, dataloader_num_workers=0, disable_tqdm=True,
                             dataloader_pin_memory=False)
    meta["optim"] = str(args.optim)
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[Labels()])
    with lab.activations():
        trainer.train()


# ---------------------------------------------------------------- torch.compile
def mlp(width=1024, depth=8):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
    meta["model"] = "mlp depth=%d width=%d" % (depth, width)
    return nn.Sequential(*layers).to("cuda")


def compiled(kind, acts):
    steps = max(a.steps, 4)  # the first step compiles
    meta.update(framework="torch.compile (default mode)", activation_labels=acts, steps=steps)
    if kind == "mlp":
        model = mlp()
        batch = 256
        make = lambda: (torch.randn(batch, 1024, device="cuda"), torch.randn(batch, 1024, device="cuda"))  # noqa: E731
        cmodel = torch.compile(model)
        loss_fn = lambda x: nn.functional.mse_loss(cmodel(x[0]), x[1])  # noqa: E731
        meta["batch"] = batch
    else:
        model = small_lm()
        cmodel = torch.compile(model)
        make = lambda: (tokens(),)  # noqa: E731
        loss_fn = lambda x: lm_loss(cmodel, x[0])  # noqa: E731
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    import contextlib
    ctx = lab.activations() if acts else contextlib.nullcontext()
    with ctx:
        for step in range(steps):
            x = make()
            tag_step_start(model, x)
            loss = loss_fn(x)
            loss.backward()
            lab.tag_grads(model)
            opt.step()
            lab.tag_optimizer(opt)
            opt.zero_grad()


# ---------------------------------------------------------------- plain loops
def frozen_adapter():
    model = small_lm()
    try:
        import peft

        cfg = peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                              lora_dropout=0.0, task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, cfg)
        meta.update(adapter="peft %s LoRA r=8 on q/k/v/o" % peft.__version__)
    except Exception as e:  # no peft: fine-tune the last layer and the head only
        print("peft failed, freezing all but the last layer:", repr(e), flush=True)
        for n, p in model.named_parameters():
            p.requires_grad_(n.startswith("model.layers.3.") or n.startswith("lm_head"))
        meta.update(adapter="none: last layer and lm_head trainable", peft_error=repr(e))
    trainable = [p for p in model.parameters() if p.requires_grad]
    meta.update(trainable=sum(p.numel() for p in trainable), total=sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(trainable, lr=1e-3)
    with lab.activations():
        for step in range(a.steps):
            x = tokens()
            tag_step_start(model, x)
            loss = lm_loss(model, x)
            loss.backward()
            lab.tag_grads(model)
            opt.step()
            lab.tag_optimizer(opt)
            opt.zero_grad()


def accum_plain(accum=2):
    model = small_lm()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    meta.update(framework="plain loop", accumulation=accum)
    with lab.activations():
        for step in range(a.steps):
            for micro in range(accum):
                x = tokens()
                tag_step_start(model, x)
                loss = lm_loss(model, x) / accum
                loss.backward()
                lab.tag_grads(model)
            opt.step()
            lab.tag_optimizer(opt)
            opt.zero_grad()


def ema(decay=0.99):
    model = small_lm()
    ema_weights = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    meta.update(framework="plain loop", ema_decay=decay, ema="clones of the parameters, torch._foreach_lerp_")
    with lab.activations():
        for step in range(a.steps):
            x = tokens()
            tag_step_start(model, x)
            lab.tag_all(ema_weights, "PARAMETER")
            loss = lm_loss(model, x)
            loss.backward()
            lab.tag_grads(model)
            opt.step()
            lab.tag_optimizer(opt)
            opt.zero_grad()
            with torch.no_grad():
                torch._foreach_lerp_(ema_weights, [p.detach() for p in model.parameters()], 1 - decay)


def loss_outside_plain():
    model = small_lm()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    meta.update(framework="plain loop", loss_outside_forward=True)
    with lab.activations():
        for step in range(a.steps):
            x = tokens()
            tag_step_start(model, x)
            loss = loss_outside(model, x)
            loss.backward()
            lab.tag_grads(model)
            opt.step()
            lab.tag_optimizer(opt)
            opt.zero_grad()


SCENARIOS = {
    "pl_gpt_loss_outside_bf16": lambda: lightning(precision="bf16-mixed", outside=True),
    "pl_gpt_loss_outside_32": lambda: lightning(outside=True),
    "loss_outside_plain": loss_outside_plain,
    "pl_auto": lambda: lightning(),
    "pl_auto_bf16": lambda: lightning(precision="bf16-mixed"),
    "pl_auto_clip": lambda: lightning(clip=1.0),
    "pl_auto_accum2": lambda: lightning(accum=2),
    "pl_manual": lambda: lightning(manual=True),
    "lbfgs": lbfgs,
    "closure_adam": closure_adam,
    "hf_trainer": hf_trainer,
    "compile_mlp": lambda: compiled("mlp", False),
    "compile_mlp_acts": lambda: compiled("mlp", True),
    "compile_qwen": lambda: compiled("qwen", False),
    "frozen_adapter": frozen_adapter,
    "accum_plain": accum_plain,
    "ema": ema,
}

if a.scenario not in SCENARIOS:
    raise SystemExit("unknown scenario " + a.scenario)
torch.cuda.reset_peak_memory_stats()
t0 = time.time()
SCENARIOS[a.scenario]()
meta["run_s"] = round(time.time() - t0, 2)
lab.finish(meta)
