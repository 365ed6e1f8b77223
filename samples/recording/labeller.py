"""Exact storage labels for a recorded run inside any training framework.

A Labeller starts the allocator history, collects (t_us, ptr, nbytes, label) rows from the
program's own knowledge (the labels and join rule of record_oracle.py and
../snapshots/README.md) and writes NAME.pickle, NAME.labels.csv and NAME.stats.json.
Call its tag_* methods from the framework's own hooks, for example in PyTorch Lightning:

    lab = Labeller("my_run", outdir)
    class Labels(pl.Callback):
        def on_train_batch_start(self, trainer, module, batch, i): lab.tag_params(module); lab.tag_inputs(batch)
        def on_before_optimizer_step(self, trainer, module, opt):  lab.tag_grads(module)
        def on_train_batch_end(self, trainer, module, out, batch, i):
            for o in trainer.optimizers: lab.tag_optimizer(o)
    with lab.activations():          # saved-for-backward tensors are ACTIVATION
        trainer.fit(model, loader)
    lab.finish()

Hugging Face Trainer: TrainerCallback.on_step_begin / on_pre_optimizer_step /
on_optimizer_step, and a forward pre-hook (with_kwargs=True) for the inputs.
Inside torch.compile'd regions saved_tensors_hooks do not fire: label what you can.

Copied from ../shared/tools/labeller.py and extended for samples/recording/record_frameworks.py:
optimizer state in lists (LBFGS keeps its history in lists), extra PARAMETER tensors (EMA
weights), no labels at all (labels=False: the seed loops), and NAME.stats.json with the
allocator settings as torch reports them (the snapshot's "allocator_settings") and a "meta" dict
of what ran.
"""
import csv
import json
import os
import pickle
import time

import torch


class Labeller:
    def __init__(self, name, out, max_entries=1_000_000, stacks="python", labels=True):
        self.name, self.out, self.rows, self.labels = name, out, [], labels
        self.meta = {"max_entries": max_entries, "stacks": stacks, "labelled": labels}
        torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks)
        self._saved = torch.autograd.graph.saved_tensors_hooks(
            lambda t: (self.tag(t, "ACTIVATION"), t)[1], lambda t: t)

    def tag(self, t, label):
        if self.labels and isinstance(t, torch.Tensor) and t.is_cuda:
            st = t.untyped_storage()
            self.rows.append((time.time_ns() // 1000, st.data_ptr(), st.nbytes(), label))

    def tag_all(self, tensors, label):
        for t in tensors:
            self.tag(t, label)

    def tag_params(self, model):
        self.tag_all(model.parameters(), "PARAMETER")
        self.tag_all(model.buffers(), "PARAMETER")

    def tag_grads(self, model):
        self.tag_all((p.grad for p in model.parameters() if p.grad is not None), "GRADIENT")

    def tag_optimizer(self, opt):
        inner = opt
        for _ in range(4):  # LightningOptimizer._optimizer, accelerate's AcceleratedOptimizer.optimizer
            nxt = getattr(inner, "optimizer", None) or getattr(inner, "_optimizer", None)
            if nxt is None or nxt is inner:
                break
            inner = nxt
        for state in inner.state.values():
            self._tag_nested(state, "OPTIMIZER_STATE")

    def _tag_nested(self, obj, label):
        if isinstance(obj, torch.Tensor):
            self.tag(obj, label)
        elif isinstance(obj, dict):
            for v in obj.values():
                self._tag_nested(v, label)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                self._tag_nested(v, label)

    def tag_inputs(self, obj):
        if isinstance(obj, torch.Tensor):
            self.tag(obj, "INPUT")
        elif isinstance(obj, dict):
            for v in obj.values():
                self.tag_inputs(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                self.tag_inputs(v)

    def activations(self):
        if not self.labels:
            import contextlib
            return contextlib.nullcontext()
        return self._saved

    def finish(self, extra=None):
        try:
            torch.cuda.synchronize()
        except Exception as e:  # after an OOM the snapshot is still worth writing
            print("synchronize:", e, flush=True)
        path = os.path.join(self.out, self.name + ".pickle")
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        if self.labels:
            with open(os.path.join(self.out, self.name + ".labels.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["t_us", "ptr", "nbytes", "label"])
                w.writerows(self.rows)
        meta = dict(self.meta, **(extra or {}))
        write_stats(self.out, self.name, dict(labels=len(self.rows), allocator_settings=allocator_settings(path),
                                              meta=meta))


def allocator_settings(pickle_path):
    """The allocator settings torch wrote into the snapshot (our own file, just written)."""
    try:
        with open(pickle_path, "rb") as f:
            snap = pickle.load(f)
        return snap.get("allocator_settings")
    except Exception as e:
        return {"error": repr(e)}


def write_stats(out, name, extra=None):
    ms = torch.cuda.memory_stats()
    d = {"scenario": name, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
         "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
         "max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved(),
         "requested_peak": ms.get("requested_bytes.all.peak"), "end_allocated": torch.cuda.memory_allocated(),
         "end_reserved": torch.cuda.memory_reserved(),
         "memory_stats": {k: v for k, v in ms.items() if isinstance(v, int)}}
    d.update(extra or {})
    json.dump(d, open(os.path.join(out, name + ".stats.json"), "w"), indent=1)
    print(name, "max_alloc MiB %.1f" % (d["max_allocated"] / 2**20), "requested_peak", d["requested_peak"], flush=True)
