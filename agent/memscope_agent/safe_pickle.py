"""Reads a snapshot pickle without running anything it contains.

A snapshot holds only dicts, lists, tuples, strings, numbers, booleans and None, so
the unpickler refuses every global (the way a pickle imports and calls code) and
every persistent id. gzip-compressed and JSON snapshots are read too.
"""

import gzip
import io
import json
import pickle


class RefusedPickle(pickle.UnpicklingError):
    pass


class _Restricted(pickle.Unpickler):
    def find_class(self, module, name):
        raise RefusedPickle("refusing global %s.%s: a snapshot holds only plain data" % (module, name))

    def persistent_load(self, pid):
        raise RefusedPickle("refusing persistent id: a snapshot holds only plain data")


def loads(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        return json.loads(data)
    return _Restricted(io.BytesIO(data)).load()


def load_file(path):
    with open(path, "rb") as f:
        data = f.read()
    snap = loads(data)
    if isinstance(snap, list):  # torch.cuda.memory_snapshot(): segments only
        snap = {"segments": snap, "device_traces": []}
    if not isinstance(snap, dict) or not ("segments" in snap or "device_traces" in snap):
        raise ValueError("%s: not a CUDA memory snapshot (expected a dict with 'segments' and 'device_traces')" % path)
    return snap
