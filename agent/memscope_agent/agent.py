"""The agent: one source of events, one journal, one server, for the life of the process."""

import atexit
import os
import platform
import socket
import sys
import threading
import time

from . import job as J
from . import protocol as P
from .sources import PollSource, ReplaySource
from .transport import Journal, Server


def _read_version():
    # The one version of memscope, app and agent alike (CMake and pyproject.toml read it too).
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION")) as f:
        return f.read().strip()


__version__ = _read_version()
MIN_TORCH = (2, 1)

_agent = None
_agent_lock = threading.Lock()


def _log(msg):
    if os.environ.get("MEMSCOPE_AGENT_QUIET") != "1":
        sys.stderr.write("memscope-agent: %s\n" % msg)
        sys.stderr.flush()


class Agent:
    def __init__(self, source, socket_path=None, tcp=None, history_mb=2048):
        self.source = source
        self.journal = Journal(history_limit=history_mb << 20)
        self.rank = J.rank_info()
        self.info = self._info()
        self.server = Server(self.journal, self.info, self.status, socket_path=socket_path, tcp=tcp, log=_log,
                             socket_name=J.socket_name(self.rank) if self.rank else None)
        self.server.write_info({})
        self.stopped = False
        self.lock = threading.Lock()

    def _info(self):
        info = {
            "agent": __version__,
            "protocol": "%d.%d" % (P.VERSION_MAJOR, P.VERSION_MINOR),
            "pid": os.getpid(),
            "argv": list(sys.argv),
            "cwd": os.getcwd(),
            "host": socket.gethostname(),
            "python": platform.python_version(),
            "mode": self.source.mode,
            "started_us": time.time_ns() // 1000,
        }
        if self.rank:  # a rank of a torchrun job: job, rank, world_size, local_rank
            info.update(self.rank)
        torch = sys.modules.get("torch")
        if torch is not None and self.source.mode != "replay":
            info["torch"] = torch.__version__
            try:
                info["devices"] = [{"index": i, "name": torch.cuda.get_device_name(i),
                                    "total_memory": torch.cuda.get_device_properties(i).total_memory}
                                   for i in range(torch.cuda.device_count())]
            except Exception:
                pass
        if self.source.mode == "replay":
            info["replay"] = os.path.abspath(self.source.path)
        return info

    def status(self):
        s = {"events": self.journal.total_events, "dropped": self.source.dropped(), "clients": self.server.client_count(),
             "mode": self.source.mode}
        s.update(self.source.extra_status())
        from . import checkpoint_guard

        if checkpoint_guard.notes:
            s["notes"] = list(checkpoint_guard.notes)
        if self.source.error:
            s["error"] = self.source.error
        return s

    def start(self):
        self.server.start()
        self.source.start(self.journal)
        who = "rank %d of job %s, " % (self.rank["rank"], self.rank["job"]) if self.rank else ""
        tcp = " and tcp %s" % self.server.tcp_address if self.server.token else ""
        _log("%s%s mode, listening on %s%s" % (who, self.source.mode, self.server.socket_path, tcp))

    def stop(self, linger=10.0):
        with self.lock:
            if self.stopped:
                return
            self.stopped = True
        try:
            end = self.source.finish()
        except Exception as e:
            end = {"reason": "exit", "error": "%s: %s" % (type(e).__name__, e)}
        self.journal.close(P.json_message(P.END, end))
        self.server.finish(timeout=linger, await_first=os.environ.get("MEMSCOPE_AGENT_RECORDER") == "1")


def _torch_version(text):
    """(major, minor) of a torch version string: "2.1.0+cu121" -> (2, 1)."""
    parts = []
    for piece in text.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (2 - len(parts)))


def recording_context():
    """torch's `context` the environment asks for: MEMSCOPE_AGENT_CONTEXT, "none" (no stacks,
    phase markers instead) for the markers mode MEMSCOPE_AGENT_MARKERS=1, "alloc" (stacks on
    allocations only) for the light mode MEMSCOPE_AGENT_LIGHT=1, else "all"."""
    env = os.environ.get
    if env("MEMSCOPE_AGENT_CONTEXT"):
        return env("MEMSCOPE_AGENT_CONTEXT")
    if env("MEMSCOPE_AGENT_MARKERS") == "1":
        return "none"
    return "alloc" if env("MEMSCOPE_AGENT_LIGHT") == "1" else "all"


def _make_source(mode, stacks, max_entries, replay, speed, max_gap, queue_log2, context="all", rate=None):
    if replay:
        return ReplaySource(replay, speed=speed, max_gap=max_gap, rate=rate)
    import torch  # noqa: the target's torch

    if _torch_version(torch.__version__) < MIN_TORCH:
        raise RuntimeError("memscope-agent needs torch %d.%d or newer; this is torch %s" % (MIN_TORCH + (torch.__version__,)))
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device; nothing to record")
    if context not in ("all", "alloc", "none"):
        raise ValueError("context is 'all', 'alloc' or 'none', not %r" % (context,))
    torch.cuda.init()
    if stacks == "all":
        # torch::symbolize (C++ frames go through it, on our thread) looks up
        # torch._inductor.codecache; import it here, on the main thread, so that lookup
        # never starts an import racing the trainer's own (seen on torch 2.11: a half
        # initialised torch._inductor.utils when Adam first imported torch._dynamo).
        # Python-only stacks are symbolized by the tracker itself, which only uses that
        # module when it is already imported.
        try:
            import torch._inductor.codecache  # noqa: F401
        except Exception:
            pass
    lib = None
    if mode in ("auto", "tracker"):
        from . import tracker

        try:
            lib = tracker.load(torch, verbose=os.environ.get("MEMSCOPE_AGENT_VERBOSE") == "1")
        except tracker.TrackerUnavailable as e:
            if mode == "tracker":
                raise
            _log("C++ tracker unavailable (%s); polling torch.cuda.memory._snapshot() instead" % e)
    if max_entries is None:
        # The tracker streams every entry itself: torch's own copy of the trace would only
        # grow (each entry keeps its stack alive) and make the final snapshot slow. Polling
        # reads that copy, so it keeps all of it.
        max_entries = 1 if lib is not None else sys.maxsize
    # "none" (markers mode): torch gathers no stack at all; the markers say where in a step
    # each event happened (markers.py).
    torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks,
                                             context=None if context == "none" else context)
    if context == "none":
        from . import markers

        markers.install(torch)
    else:
        from . import checkpoint_guard

        checkpoint_guard.install(torch, max_entries, stacks, _note)
    if lib is not None:
        # Light: torch hands a free its allocation's stack; the stream sends none.
        return tracker.TrackerSource(torch, lib, queue_log2=queue_log2,
                                     batch_ms=int(os.environ.get("MEMSCOPE_AGENT_BATCH_MS", "50")),
                                     free_stacks=context == "all")
    return PollSource(torch)


def _note(text):
    """A switch the agent made to keep the training running: logged, sent as ERROR, kept in STATUS."""
    _log(text)
    a = _agent
    if a is not None:
        a.journal.append(a.journal.OTHER, P.json_message(P.ERROR, {"message": text}))


def start(socket_path=None, tcp=None, mode=None, stacks=None, max_entries=None, replay=None, speed=None, max_gap=None,
          wait_client=False, history_mb=None, queue_log2=None, context=None, rate=None):
    """Starts the agent in this process (once); returns it. Settings default to the
    MEMSCOPE_AGENT_* environment variables (docs/LIVE.md)."""
    global _agent
    env = os.environ.get
    with _agent_lock:
        if _agent is not None:
            return _agent
        mode = mode or env("MEMSCOPE_AGENT_MODE", "auto")
        stacks = stacks or env("MEMSCOPE_AGENT_STACKS", "python")
        max_entries = max_entries or (int(env("MEMSCOPE_AGENT_MAX_ENTRIES")) if env("MEMSCOPE_AGENT_MAX_ENTRIES") else None)
        context = context or recording_context()
        replay = replay or env("MEMSCOPE_AGENT_REPLAY") or None
        speed = float(env("MEMSCOPE_AGENT_SPEED", "1")) if speed is None else speed
        max_gap = float(env("MEMSCOPE_AGENT_MAX_GAP", "1")) if max_gap is None else max_gap
        socket_path = socket_path or env("MEMSCOPE_AGENT_SOCKET") or None
        tcp = tcp or env("MEMSCOPE_AGENT_TCP") or None
        history_mb = history_mb or int(env("MEMSCOPE_AGENT_HISTORY_MB", "2048"))
        queue_log2 = queue_log2 or int(env("MEMSCOPE_AGENT_QUEUE_LOG2", "18"))
        source = _make_source(mode, stacks, max_entries, replay, speed, max_gap, queue_log2, context, rate)
        agent = Agent(source, socket_path=socket_path, tcp=tcp, history_mb=history_mb)
        agent.start()
        if isinstance(source, ReplaySource) and not wait_client:
            source.go.set()  # otherwise the caller sets it once a client is there
        _agent = agent
        atexit.register(stop)
        os.register_at_fork(after_in_child=_forget_in_child)
        return agent


def _forget_in_child():
    # A forked child (a DataLoader worker, say) has no agent threads: it must not
    # stop the parent's agent at its exit or serve on the parent's socket.
    global _agent
    _agent = None


def stop():
    global _agent
    agent = _agent
    if agent is not None and agent.info.get("pid") == os.getpid():
        agent.stop(linger=float(os.environ.get("MEMSCOPE_AGENT_LINGER", "10")))


def running():
    return _agent
