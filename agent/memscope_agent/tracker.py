"""The fast path: the C++ tracker extension, built for this process's torch.

The extension (``_tracker.cpp``) is compiled once per torch version with
``torch.utils.cpp_extension`` into ``~/.cache/memscope/tracker/<hash>/`` and loaded
with ctypes (its calls release the GIL). When it cannot be built (no compiler, no CUDA
headers, an incompatible torch) the agent falls back to polling.
"""

import ctypes
import hashlib
import os
import shutil
import sys
import threading

from .sources import Source, final_state

_lib = None
_lock = threading.Lock()


class TrackerUnavailable(Exception):
    pass


def _cache_dir(torch, source):
    key = hashlib.sha1()
    key.update(source)
    key.update(torch.__version__.encode())
    key.update(sys.version.encode())
    key.update(str(getattr(torch.version, "cuda", "")).encode())
    base = os.environ.get("MEMSCOPE_AGENT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memscope", "tracker")
    return os.path.join(base, key.hexdigest()[:16])


def load(torch, verbose=False):
    """Builds (first time) and loads the extension; raises TrackerUnavailable."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tracker.cpp")
        with open(src, "rb") as f:
            source = f.read()
        build_dir = _cache_dir(torch, source)
        so = os.path.join(build_dir, "memscope_tracker.so")
        if not os.path.exists(so):
            cxx = os.environ.get("CXX", "c++")
            if not shutil.which(cxx):
                raise TrackerUnavailable("no C++ compiler (%s) on PATH" % cxx)
            try:
                from torch.utils import cpp_extension
            except Exception as e:
                raise TrackerUnavailable("torch.utils.cpp_extension unavailable: %s" % e)
            os.makedirs(build_dir, exist_ok=True)
            try:
                cpp_extension.load(name="memscope_tracker", sources=[src], build_directory=build_dir,
                                   is_python_module=False, with_cuda=True, extra_cflags=["-O2"], verbose=verbose)
            except Exception as e:
                raise TrackerUnavailable("building the tracker extension failed (%s: %s); see %s" %
                                         (type(e).__name__, str(e).strip().splitlines()[-1] if str(e).strip() else "",
                                          build_dir))
            if not os.path.exists(so):
                raise TrackerUnavailable("the build left no %s" % so)
        try:
            lib = ctypes.CDLL(so)
        except OSError as e:
            raise TrackerUnavailable("loading %s failed: %s" % (so, e))
        lib.ms_start.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.ms_start.restype = ctypes.c_int
        lib.ms_stop.argtypes = []
        lib.ms_next.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]
        lib.ms_next.restype = ctypes.c_int
        lib.ms_take.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.ms_suppress_snapshot.argtypes = [ctypes.c_int]
        lib.ms_free_stacks.argtypes = [ctypes.c_int]
        lib.ms_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        _lib = lib
        return lib


class TrackerSource(Source):
    mode = "tracker"

    def __init__(self, torch, lib, queue_log2=18, annotations=True, batch_ms=50, free_stacks=True):
        super().__init__()
        self.torch = torch
        self.lib = lib
        lib.ms_free_stacks(1 if free_stacks else 0)
        if lib.ms_start(queue_log2, 1 if annotations else 0, batch_ms) != 0:
            raise TrackerUnavailable("the tracker is already running")
        self.finished = threading.Event()

    def stats(self):
        out = (ctypes.c_uint64 * 12)()
        self.lib.ms_stats(out)
        return {"accepted": out[0], "dropped": out[1], "annotations": out[2], "queue_capacity": out[3],
                "queue_high_water": out[4], "batches": out[5], "gil_batches": out[6], "gil_ms": round(out[7] / 1e6, 3),
                "py_frames_symbolized": out[8], "py_frames_looked_up": out[9], "stacks_via_torch": out[10],
                "worker_ms": round(out[11] / 1e6, 3)}

    def dropped(self):
        return self.stats()["dropped"]

    def extra_status(self):
        s = self.stats()
        return {"queue_capacity": s["queue_capacity"], "queue_high_water": s["queue_high_water"]}

    def run(self):
        sizes = (ctypes.c_int64 * 3)()
        while True:
            r = self.lib.ms_next(100, sizes)
            if r < 0:
                break
            if r == 0:
                continue
            defs = ctypes.create_string_buffer(max(1, sizes[0]))
            events = ctypes.create_string_buffer(max(1, sizes[1]))
            self.lib.ms_take(defs, events)
            self.journal.append(self.journal.DEFS, defs.raw[:sizes[0]])
            self.journal.append(self.journal.EVENTS, events.raw[:sizes[1]], sizes[2])
        self.finished.set()

    def stop(self):
        # The worker drains the queue before ending; the pump forwards the last batches.
        self.lib.ms_stop()
        if self.thread:
            self.thread.join()

    def finish(self):
        self.lib.ms_suppress_snapshot(1)
        try:
            snap = self.torch.cuda.memory._snapshot()
        finally:
            self.lib.ms_suppress_snapshot(0)
        self.stop()
        return final_state(self.journal, self.torch, snap, {"reason": "exit", "dropped": self.dropped(),
                                                            "tracker": self.stats()})
