#!/usr/bin/env python3
"""Makes the committed robustness fixtures from real snapshots of this repository.

Run from the repository root: python3 tests/robustness/make_fixtures.py
It reads only our own trusted recordings (samples/, tests/data/) with Python's pickle
module; memscope itself never does. Each output is described in tests/robustness/README.md.
"""
import copy
import os
import pickle

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "robustness", "data")


def load(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return pickle.load(f)


def dump(obj, name, protocol=4):
    with open(os.path.join(OUT, name), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def two_devices():
    """Device 0 is samples/release.pickle, device 1 is samples/linear3.pickle."""
    a = load("samples/release.pickle")
    b = load("samples/linear3.pickle")
    out = copy.deepcopy(a)
    segs1 = copy.deepcopy(b["segments"])
    for s in segs1:
        s["device"] = 1
    out["segments"] = out["segments"] + segs1
    out["device_traces"] = [a["device_traces"][0], b["device_traces"][0]]
    dump(out, "two_devices.pickle")


def empty_traces():
    """release.pickle with an empty trace (segments kept), and a snapshot with nothing at all."""
    a = load("samples/release.pickle")
    a["device_traces"] = [[]]
    dump(a, "empty_trace.pickle")
    dump({"segments": [], "device_traces": []}, "empty_snapshot.pickle")


def torch20_history():
    """samples/linear3.pickle rewritten the way PyTorch 2.0 wrote it: no time_us (nor
    compile_context/user_metadata) in trace entries, blocks without address/requested_size
    that carry `history: [{addr, real_size, frames}]`, no allocator_settings/annotations."""
    a = load("samples/linear3.pickle")
    out = {"segments": [], "device_traces": []}
    for s in a["segments"]:
        seg = {k: s[k] for k in ("device", "address", "total_size", "allocated_size", "active_size",
                                  "stream", "segment_type")}
        blocks = []
        for b in s["blocks"]:
            nb = {"size": b["size"], "state": b["state"]}
            if b["state"] != "inactive":
                nb["history"] = [{"addr": b["address"], "real_size": b["requested_size"], "frames": b["frames"]}]
            blocks.append(nb)
        seg["blocks"] = blocks
        out["segments"].append(seg)
    for trace in a["device_traces"]:
        out["device_traces"].append([{k: e[k] for k in ("action", "addr", "size", "stream", "frames") if k in e}
                                     for e in trace])
    dump(out, "torch20_history.pickle", protocol=2)


def linear3_json():
    """samples/linear3.pickle as JSON (the form some tools save), for the truncation test."""
    a = load("samples/linear3.pickle")
    import json
    with open(os.path.join(OUT, "linear3.json"), "w") as f:
        json.dump(a, f, separators=(",", ":"))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    linear3_json()
    two_devices()
    empty_traces()
    torch20_history()
