"""memscope in Python: where did a PyTorch program's GPU memory go?

    import memscope
    a = memscope.open("run.pickle")      # read and replayed, as fast as `memscope summary`
    a.summary()                          # == `memscope summary run.pickle --json`
    a.allocations()                      # pandas DataFrame, the columns of `memscope allocations --csv`
    a.timeline(columns=1000)             # DataFrame: requested, reserved and each category over time
    a.peak()                             # what is live at the peak: categories, allocations, call sites
    a.diagnose()                         # == `memscope diagnose --json`
    a.whatif(set=["expandable_segments:True"], capacity="24GiB")   # == `memscope whatif --json`
    memscope.diff(a, b)                  # == `memscope diff --json`
    a.plot()                             # matplotlib figure of the stacked categories

Every answer comes from the C++ core (memscope._memscope): the same analyze() and the same
writers as the command line. A pickle is never executed: the core reads it with its own
reader, which refuses anything but data. docs/PYTHON.md is the reference.
"""

import json as _json
import os as _os

from . import _memscope

__all__ = ["Analysis", "SnapshotError", "open", "diff", "ranks", "CATEGORIES", "PHASES", "__version__"]

__version__ = _memscope.__version__

#: Raised when a file cannot be read as a snapshot; the message is the command line's one line
#: (the file, the byte offset or key, and what was expected there). A ValueError.
SnapshotError = _memscope.SnapshotError

#: Category names, by their codes in allocations()["category"].cat.codes.
CATEGORIES = tuple(_memscope.categories())
#: Phase names, by their codes.
PHASES = tuple(_memscope.phases())
_CATEGORY_COLORS = tuple(_memscope.category_colors())
_CATEGORY_LABELS = tuple(_memscope.category_labels())


def _device(device):
    if device is None:
        return None
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be a CUDA device ordinal (int), got {device!r}")
    return device


def _human(n):
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    x = float(n)
    for u in units:
        if abs(x) < 1024 or u == units[-1]:
            return f"{x:.0f} {u}" if u == "B" else f"{x:.2f} {u}"
        x /= 1024
    return f"{n} B"


class Analysis:
    """One snapshot, opened with memscope.open(path)."""

    def __init__(self, path):
        self._path = _os.fspath(path)
        self._h = _memscope.Handle(self._path)

    def __repr__(self):
        return f"<memscope.Analysis {self._path!r}, devices {self.devices}>"

    @property
    def path(self):
        return self._path

    @property
    def devices(self):
        """The CUDA device ordinals the snapshot has."""
        return list(self._h.devices())

    @property
    def focus_device(self):
        """The device opened first: one that ran out of memory, else the highest peak."""
        return self._h.focus_device()

    def summary(self, device=None):
        """The dict `memscope summary FILE [--device N] --json` prints."""
        return _json.loads(self._h.summary_json(_device(device)))

    def allocations(self, device=None):
        """One row per allocation, the columns of `memscope allocations FILE --csv`.

        Numeric columns are int64/uint64 (alloc_time_us is a nullable Int64: empty in the CSV
        for a block alive before the trace); category, phase, top_frame, op and module are
        categoricals (op and module: the operation and the nn.Module path of its stack, "" where
        none).
        """
        import numpy as np
        import pandas as pd

        c = self._h.allocations(_device(device))
        frames = list(c["frame_texts"])
        top = c["top_frame"]
        if "" not in frames:  # "": no frame to name, as the CSV leaves the field
            frames.append("")
        codes = np.where(top < 0, frames.index(""), top)
        frame_categories = pd.Index(frames, dtype=object)
        columns = {
            "alloc_event": c["alloc_event"],
            "free_requested_event": c["free_requested_event"],
            "free_event": c["free_event"],
            "alloc_time_us": pd.arrays.IntegerArray(c["alloc_time_us"], c["has_time"] == 0),
            "addr": c["addr"],
            "size": c["size"],
            "stream": c["stream"],
            "category": pd.Categorical.from_codes(c["category"].astype(np.int8), categories=list(CATEGORIES)),
            "phase": pd.Categorical.from_codes(c["phase"].astype(np.int8), categories=list(PHASES)),
            "iteration": c["iteration"].astype(np.int64),
            "top_frame": pd.Categorical.from_codes(codes.astype(np.int32), categories=frame_categories),
            # index 0 of op_texts and module_texts is "": none
            "op": pd.Categorical.from_codes(c["op"].astype(np.int32), categories=pd.Index(list(c["op_texts"]), dtype=object)),
            "module": pd.Categorical.from_codes(
                c["module"].astype(np.int32), categories=pd.Index(list(c["module_texts"]), dtype=object)
            ),
        }
        return pd.DataFrame(columns)

    def timeline(self, device=None, columns=1000):
        """The curves in at most `columns` rows, each at the highest requested event of its run of
        events: time_us, event_index, requested_bytes, reserved_bytes, one column of bytes per
        category (timeline.csv's names) and phase."""
        import numpy as np
        import pandas as pd

        if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
            raise ValueError(f"columns must be a positive int, got {columns!r}")
        t = self._h.timeline(_device(device), columns)
        data = {k: t[k] for k in ["time_us", "event_index", "requested_bytes", "reserved_bytes", *CATEGORIES]}
        data["phase"] = pd.Categorical.from_codes(t["phase"].astype(np.int8), categories=list(PHASES))
        return pd.DataFrame(data)

    def peak(self, device=None, top=10):
        """What is live at the device's requested peak: the point (bytes, phase, iteration,
        by_category), the `top` largest allocations and the `top` call sites."""
        return _json.loads(self._h.point_json(_device(device), None, int(top)))

    def allocations_at(self, time_us, device=None, top=10):
        """What is live after the last event at or before time_us (the trace's clock)."""
        return _json.loads(self._h.point_json(_device(device), int(time_us), int(top)))

    def report(self, device=None):
        """report.json of `memscope report` (at the peak, with the findings)."""
        return _json.loads(self._h.report_json(_device(device)))

    def diagnose(self, device=None):
        """The findings, as `memscope diagnose FILE [--device N] --json` prints them."""
        return _json.loads(self._h.diagnose_json(_device(device)))

    def whatif(self, device=None, set=None, capacity=None, recorded_batch=None, batch=None, max_batch=False,
               checkpoint=None, precision=None, optimizer=None, accumulate=None, seq=None, recorded_seq=None,
               recorded_precision=None, recorded_optimizer=None, plan=False, shard=None):
        """`memscope whatif FILE --json` with the same options: `set` a list of "key:value"
        allocator settings (or a dict), `capacity` "80GiB" or bytes, `recorded_batch`, `batch`,
        `max_batch` (needs capacity); the model-level changes `checkpoint` ("all" or N blocks),
        `precision` ("bf16", "amp-bf16", ...), `optimizer` ("sgd-momentum", "adamw-8bit", ...),
        `accumulate` (K micro-batches), `seq` with `recorded_seq`, the overrides
        `recorded_precision` and `recorded_optimizer`; `shard` ("ddp:N", "zero1:N" or "fsdp2:N":
        N GPUs each training the recorded batch, every rank's peaks under "ranks"); and `plan`
        (needs capacity): the changes that fit, cheapest first, under the result's "plan" key."""
        args = [self._path, "--json"]
        if device is not None:
            args += ["--device", str(_device(device))]
        if isinstance(set, dict):
            set = [f"{k}:{v}" for k, v in set.items()]
        elif isinstance(set, str):
            set = [set]
        for s in set or []:
            args += ["--set", str(s)]
        if capacity is not None:
            args += ["--capacity", str(capacity)]
        if recorded_batch is not None:
            args += ["--recorded-batch", repr(recorded_batch)]
        if batch is not None:
            args += ["--batch", repr(batch)]
        if max_batch:
            args.append("--max-batch")
        for option, value in (("--checkpoint", checkpoint), ("--precision", precision), ("--optimizer", optimizer),
                              ("--accumulate", accumulate), ("--seq", seq), ("--recorded-seq", recorded_seq),
                              ("--recorded-precision", recorded_precision),
                              ("--recorded-optimizer", recorded_optimizer), ("--shard", shard)):
            if value is not None:
                args += [option, str(value)]
        if plan:
            args.append("--plan")
        return _json.loads(_memscope.whatif_json(args))

    def plot(self, device=None, columns=2000, ax=None):
        """A matplotlib figure: each category's bytes stacked over time, the reserved line above."""
        import matplotlib.pyplot as plt

        t = self.timeline(device, columns)
        if ax is None:
            fig, ax = plt.subplots(figsize=(10, 4))
        else:
            fig = ax.figure
        seconds = (t["time_us"] - (t["time_us"].iloc[0] if len(t) else 0)) / 1e6
        gib = 1024.0**3
        ax.stackplot(seconds, *[t[c] / gib for c in CATEGORIES], labels=list(_CATEGORY_LABELS),
                     colors=list(_CATEGORY_COLORS), linewidth=0)
        ax.plot(seconds, t["reserved_bytes"] / gib, color="black", linewidth=1, label="Reserved")
        dev = self.focus_device if device is None else device
        ax.set_title(f"{_os.path.basename(self._path)}, device {dev}")
        ax.set_xlabel("seconds")
        ax.set_ylabel("GiB")
        ax.legend(loc="upper left", fontsize="small", ncol=2)
        ax.margins(x=0)
        return fig

    def _summary_html(self):
        rows = []
        for d in self.summary()["devices"]:
            rows.append(
                "<tr>" + "".join(f"<td>{v}</td>" for v in (
                    d["device"], d["events"], d["allocations"], _human(d["peak_requested_bytes"]),
                    _human(d["peak_reserved_bytes"]), d["oom_events"], "yes" if d["truncated"] else "no")) + "</tr>")
        head = "".join(f"<th>{h}</th>" for h in (
            "device", "events", "allocations", "peak requested", "peak reserved", "OOMs", "truncated"))
        return f"<table><tr>{head}</tr>{''.join(rows)}</table>"

    def _repr_html_(self):
        """In Jupyter: the summary table and the plot."""
        import base64
        import io

        import matplotlib.pyplot as plt

        html = f"<b>{_os.path.basename(self._path)}</b>{self._summary_html()}"
        if self.devices:
            fig = self.plot()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
            plt.close(fig)
            html += f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'
        return html


def open(path):
    """Reads and replays a snapshot (.pickle, .pickle.gz, .json). Raises SnapshotError."""
    return Analysis(path)


def diff(a, b, device=None, call_sites=15):
    """`memscope diff A B --json`: two runs compared by iteration and phase."""
    if not isinstance(a, Analysis):
        a = open(a)
    if not isinstance(b, Analysis):
        b = open(b)
    return _json.loads(_memscope.diff_json(a._h, b._h, _device(device), int(call_sites)))


def ranks(*paths):
    """`memscope summary DIR|FILE... --json`: a distributed job's ranks."""
    return _json.loads(_memscope.ranks_json([_os.fspath(p) for p in paths]))
