"""Recording must never break the training: the checkpointing guard.

Under torch 2.11, torch gathering Python stacks for the allocator's trace
(``_record_memory_history(stacks="python")`` with context "all" or "alloc") and
non-reentrant activation checkpointing (``torch.utils.checkpoint.checkpoint(...,
use_reentrant=False)``, which transformers' ``gradient_checkpointing_enable()`` and
``checkpoint_sequential`` use) crashed training runs with ``SystemError: <built-in method
...> returned NULL without setting an exception`` in the recomputation (dropout,
``run_backward``). agent/tools/checkpoint_modes.py reproduces it per mode on a GPU.

The guard wraps ``torch.utils.checkpoint.checkpoint`` and ``checkpoint_sequential`` (before
the program imports them). At the first non-reentrant call, still in the forward and so
before any recomputation, it turns torch's stack gathering off (``context=None``, the
markers mode) and installs the phase markers instead, then says so: an ERROR message in
the stream (the app shows it) and ``notes`` in STATUS. MEMSCOPE_AGENT_CKPT_GUARD=0 turns
the guard off (to reproduce the crash).
"""

import functools
import os

NOTE = ("non-reentrant activation checkpointing detected: Python stacks turned off (markers mode) "
        "to avoid torch's SystemError when recording stacks during recomputation")

_state = {"installed": False, "tripped": False}
notes = []


def install(torch, max_entries, stacks, on_note):
    """Wraps torch.utils.checkpoint once; on_note(text) reports the switch."""
    if _state["installed"] or os.environ.get("MEMSCOPE_AGENT_CKPT_GUARD") == "0":
        return False
    try:
        import torch.utils.checkpoint as ckpt
    except Exception:
        return False
    _state["installed"] = True

    def trip():
        if _state["tripped"]:
            return
        _state["tripped"] = True
        try:
            torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks, context=None)
            from . import markers

            markers.install(torch)
        except Exception as e:  # never raise into the trainer
            notes.append("checkpointing guard failed: %s: %s" % (type(e).__name__, e))
            on_note(notes[-1])
            return
        notes.append(NOTE)
        on_note(NOTE)

    original = ckpt.checkpoint

    @functools.wraps(original)
    def checkpoint(function, *args, use_reentrant=None, **kwargs):
        if use_reentrant is not True:
            trip()
        if use_reentrant is None:
            return original(function, *args, **kwargs)
        return original(function, *args, use_reentrant=use_reentrant, **kwargs)

    ckpt.checkpoint = checkpoint
    if hasattr(ckpt, "checkpoint_sequential"):
        original_seq = ckpt.checkpoint_sequential

        @functools.wraps(original_seq)
        def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
            if use_reentrant is not True:
                trip()
            if use_reentrant is None:
                return original_seq(functions, segments, input, **kwargs)
            return original_seq(functions, segments, input, use_reentrant=use_reentrant, **kwargs)

        ckpt.checkpoint_sequential = checkpoint_sequential
    return True
