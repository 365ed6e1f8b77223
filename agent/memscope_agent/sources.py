"""Where the agent's events come from.

- ReplaySource: a recorded snapshot file, served at its recorded pace (no torch needed).
- PollSource: torch.cuda.memory._snapshot() polled; new trace entries are those past
  the ones already sent (matched on the last one sent when the ring buffer wrapped).
- TrackerSource: the C++ tracker extension (tracker.py) hands over ready-made batches.

Each runs on its own thread, appends (definitions, then events) to the journal, and on
finish() appends the final allocator state (segments, settings) and END.
"""

import heapq
import threading
import time

from . import protocol as P
from . import safe_pickle


class Source:
    mode = "?"

    def __init__(self):
        self.stop_event = threading.Event()
        self.thread = None
        self.error = None

    def dropped(self):
        return 0

    def extra_status(self):
        return {}

    def start(self, journal):
        self.journal = journal
        self.thread = threading.Thread(target=self._run_guarded, name="memscope-source", daemon=True)
        self.thread.start()

    def _run_guarded(self):
        try:
            self.run()
        except Exception as e:  # reported to clients, never raised into the trainer
            self.error = "%s: %s" % (type(e).__name__, e)
            self.journal.append(self.journal.OTHER, P.json_message(P.ERROR, {"message": self.error}))

    def run(self):
        raise NotImplementedError

    def stop(self):
        self.stop_event.set()
        if self.thread and self.thread is not threading.current_thread():
            self.thread.join()

    def _push(self, encoder):
        defs, body, n = encoder.take()
        self.journal.append(self.journal.DEFS, defs)
        self.journal.append(self.journal.EVENTS, body, n)


class ReplaySource(Source):
    mode = "replay"

    def __init__(self, path, speed=1.0, max_gap=1.0, rate=None):
        super().__init__()
        self.path = path
        self.snapshot = safe_pickle.load_file(path)
        self.speed = speed
        self.max_gap = max_gap
        self.rate = rate  # events a second (None: the recorded pace times speed; 0: unpaced)
        self.done = threading.Event()
        self.go = threading.Event()

    def items(self):
        def device_stream(d, trace):  # binds d now: a generator expression would read it late
            return ((e.get("time_us") or 0, 0, d, e) for e in trace)

        streams = []
        for d, trace in enumerate(self.snapshot.get("device_traces") or []):
            streams.append(device_stream(d, trace))
        streams.append(((a.get("time_us") or 0, 1, -1, a) for a in self.snapshot.get("external_annotations") or []))
        return heapq.merge(*streams, key=lambda x: x[0])

    def run(self):
        enc = P.Encoder()
        enc.settings(self.snapshot.get("allocator_settings") or {})
        self._push(enc)
        self.go.wait()
        paced = self.speed and self.speed > 0 and self.rate is None
        by_rate = bool(self.rate)
        sent = 0
        t_prev = None
        virtual = 0.0
        wall0 = time.monotonic()
        last_flush = wall0
        for t, kind, device, entry in self.items():
            if self.stop_event.is_set():
                break
            if paced and t:
                if t_prev is not None:
                    virtual += min(max(t - t_prev, 0) / 1e6, self.max_gap) / self.speed
                t_prev = t
                target = wall0 + virtual
                now = time.monotonic()
                if target > now + 0.002:
                    self._push(enc)
                    last_flush = time.monotonic()
                    self.stop_event.wait(target - last_flush)
            if by_rate and kind == 0:
                target = wall0 + sent / self.rate
                if target > time.monotonic() + 0.002:
                    self._push(enc)
                    last_flush = time.monotonic()
                    self.stop_event.wait(target - last_flush)
            if kind == 0:
                sent += 1
                enc.event(device, entry)
            else:
                enc.annotation(entry)
            if enc.pending_events >= 8192 or (time.monotonic() - last_flush > 0.02 and enc.pending_events):
                self._push(enc)
                last_flush = time.monotonic()
        self._push(enc)
        self.done.set()

    def finish(self):
        self.go.set()
        self.stop()
        enc = P.Encoder(P.PYTHON_ID_BASE + 0x10000000)
        enc.segments(self.snapshot.get("segments") or [])
        defs, body, _ = enc.take()
        self.journal.append(self.journal.DEFS, defs)
        self.journal.append(self.journal.OTHER, body)
        return {"reason": "replay_done", "source": self.path}


def _entry_key(e):
    return (e.get("action"), e.get("addr"), e.get("size"), e.get("time_us"))


class PollSource(Source):
    mode = "poll"

    def __init__(self, torch, interval=0.5):
        super().__init__()
        self.torch = torch
        self.interval = interval
        self.encoder = P.Encoder()
        self.sent = {}
        self.last = {}
        self.sent_annotations = 0
        self.lost = 0
        self.lock = threading.Lock()
        self.last_cost = 0.0

    def dropped(self):
        return self.lost

    def extra_status(self):
        return {"poll_cost_s": round(self.last_cost, 4)}

    def poll(self):
        with self.lock:
            t0 = time.monotonic()
            snap = self.torch.cuda.memory._snapshot()
            enc = self.encoder
            for d, trace in enumerate(snap.get("device_traces") or []):
                n = self.sent.get(d, 0)
                start = n
                if n and (len(trace) < n or _entry_key(trace[n - 1]) != self.last.get(d)):
                    start = None
                    for i in range(len(trace) - 1, -1, -1):
                        if _entry_key(trace[i]) == self.last.get(d):
                            start = i + 1
                            break
                    if start is None:  # the ring buffer wrapped past everything we sent
                        start = 0
                        self.lost += 1
                for e in trace[start:]:
                    enc.event(d, e)
                self.sent[d] = len(trace)
                if trace:
                    self.last[d] = _entry_key(trace[-1])
            annotations = snap.get("external_annotations") or []
            for a in annotations[self.sent_annotations:]:
                enc.annotation(a)
            self.sent_annotations = len(annotations)
            enc.reset_object_cache()
            self._push(enc)
            self.last_cost = time.monotonic() - t0
            return snap

    def run(self):
        while not self.stop_event.is_set():
            self.poll()
            self.stop_event.wait(max(self.interval, 10 * self.last_cost))

    def finish(self):
        self.stop()
        snap = self.poll()
        return final_state(self.journal, self.torch, snap, {"reason": "exit", "dropped": self.lost})


def final_state(journal, torch, snap, end):
    enc = P.Encoder(P.PYTHON_ID_BASE + 0x10000000)
    enc.settings(snap.get("allocator_settings") or {})
    enc.segments(snap.get("segments") or [])
    defs, body, _ = enc.take()
    journal.append(journal.DEFS, defs)
    journal.append(journal.OTHER, body)
    stats = {}
    try:
        for d in range(torch.cuda.device_count()):
            ms = torch.cuda.memory_stats(d)
            if ms:
                stats[str(d)] = {k: ms.get(k) for k in ("requested_bytes.all.peak", "allocated_bytes.all.peak",
                                                        "reserved_bytes.all.peak", "requested_bytes.all.current",
                                                        "reserved_bytes.all.current", "num_ooms")}
    except Exception:
        pass
    end["memory_stats"] = stats
    return end
