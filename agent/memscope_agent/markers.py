"""Markers mode: phase evidence without stacks (docs/LIVE.md, "Markers mode").

torch records no stack at all (``context=None``), which makes an allocation nearly free to
record; what the stacks told memscope's attribution (forward, backward, optimizer step,
zero_grad) comes instead from a few annotations per training step, written with
``record_function`` so that torch stamps them on the allocator's own clock and the
tracker's USER_SCOPE callback sends them in order with the events:

- ``memscope.forward``: the outermost nn.Module call on this thread (``nn.Module.__call__``
  wrapped; a nested call costs one Python call and a test);
- ``memscope.backward``: ``torch.autograd.backward`` and ``torch.autograd.grad``
  (``Tensor.backward`` goes through the former), whose range covers the autograd
  engine's threads by time;
- ``memscope.zero_grad``: ``nn.Module.zero_grad`` (torch's optimizers already annotate
  ``Optimizer.step#...`` and ``Optimizer.zero_grad#...`` themselves).

Only the thread that installed them marks (the tracker's annotation callback is that
thread's); a module called on another thread (an autograd thread recomputing a
checkpoint) stays part of the backward around it.

MEMSCOPE_AGENT_MARKERS_FORWARD (call; hooks: torch's global module hooks instead; off) and
MEMSCOPE_AGENT_MARKERS_OTHER (default backward,grad,zero_grad) choose the parts, for
measuring what each costs (bench/agent_overhead.py's modes).
"""

import functools
import os
import threading

FORWARD = "memscope.forward"
BACKWARD = "memscope.backward"
ZERO_GRAD = "memscope.zero_grad"

_installed = None


class _State:
    __slots__ = ("depth", "open", "ident")

    def __init__(self, ident):
        self.depth = 0
        self.open = []
        self.ident = ident


def install(torch):
    """Installs the hooks once in this process; returns a dict of what was installed."""
    global _installed
    if _installed is not None:
        return _installed
    try:
        record_function = torch.autograd.profiler.record_function
    except AttributeError:
        from torch.autograd.profiler import record_function

    get_ident = threading.get_ident
    st = _State(get_ident())
    done = {}

    forward = os.environ.get("MEMSCOPE_AGENT_MARKERS_FORWARD", "call")
    if forward == "call":
        # Module.__call__ wrapped: the outermost call on this thread opens the range, a nested
        # one (or another thread's) passes straight through. torch's global module hooks
        # would do the same, but any global hook sends every module call down _call_impl's
        # slow path (measured on the Trainer loop: docs/PERFORMANCE.md).
        module_call = torch.nn.Module.__call__

        def call(self, *args, **kwargs):
            if st.depth or get_ident() != st.ident:
                return module_call(self, *args, **kwargs)
            st.depth = 1
            rf = record_function(FORWARD)
            rf.__enter__()
            try:
                return module_call(self, *args, **kwargs)
            finally:
                st.depth = 0
                rf.__exit__(None, None, None)

        call.__memscope_marker__ = True
        if not getattr(module_call, "__memscope_marker__", False):
            torch.nn.Module.__call__ = call
        done["forward"] = "call"
    elif forward == "hooks":  # the global module hooks, kept to measure them against "call"
        def pre(module, args):
            if get_ident() == st.ident:
                st.depth += 1
                if st.depth == 1:
                    rf = record_function(FORWARD)
                    rf.__enter__()
                    st.open.append(rf)
            return None

        def post(module, args, output):
            if get_ident() == st.ident and st.depth > 0:
                st.depth -= 1
                if st.depth == 0 and st.open:
                    st.open.pop().__exit__(None, None, None)
            return None

        hooks = torch.nn.modules.module
        hooks.register_module_forward_pre_hook(pre)
        try:  # always_call (torch >= 2.1): the end is marked when a forward raises, too
            hooks.register_module_forward_hook(post, always_call=True)
        except TypeError:
            hooks.register_module_forward_hook(post)
        done["forward"] = "hooks"

    def marked(fn, name):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if get_ident() != st.ident:
                return fn(*args, **kwargs)
            with record_function(name):
                return fn(*args, **kwargs)

        wrapper.__memscope_marker__ = True
        return wrapper

    parts = os.environ.get("MEMSCOPE_AGENT_MARKERS_OTHER", "backward,grad,zero_grad").split(",")
    for owner, attr, name in ((torch.autograd, "backward", BACKWARD), (torch.autograd, "grad", BACKWARD),
                              (torch.nn.Module, "zero_grad", ZERO_GRAD)):
        if attr not in parts:
            continue
        fn = getattr(owner, attr, None)
        if fn is not None and not getattr(fn, "__memscope_marker__", False):
            setattr(owner, attr, marked(fn, name))
            done[attr] = True
    _installed = done
    return done
