#!/usr/bin/env python3
"""Seed streams for fuzz_live_decoder: real snapshots of this repository sent through the
agent's own encoder (agent/memscope_agent/protocol.py), as the replay agent would send
them. Run from the repository root: python3 fuzz/make_live_seeds.py"""
import os
import pickle
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "agent"))
from memscope_agent import protocol as P  # noqa: E402


def stream(snap, cut=None):
    info = {"pid": 4242, "mode": "replay", "command_line": "train.py", "torch": "2.11.0", "python": "3.12",
            "host": "seed", "devices": ["NVIDIA H200"], "started_us": 1795310678667380}
    out = bytearray(P.hello(info))
    enc = P.Encoder()
    enc.settings(snap.get("allocator_settings") or {})
    for d, trace in enumerate(snap.get("device_traces") or []):
        for e in trace[:cut]:
            enc.event(d, e)
    for a in (snap.get("external_annotations") or [])[:4]:
        enc.annotation(a)
    defs, body, _ = enc.take()
    out += defs + body
    enc = P.Encoder(P.PYTHON_ID_BASE + 0x10000000)
    enc.segments((snap.get("segments") or [])[:2])
    defs, body, _ = enc.take()
    out += defs + body
    out += P.json_message(P.STATUS, {"events": 10, "dropped": 0})
    out += P.json_message(P.END, {"reason": "replay_done"})
    return bytes(out)


def main():
    d = os.path.join(ROOT, "fuzz", "corpus", "fuzz_live_decoder")
    os.makedirs(d, exist_ok=True)
    for name, path, cut in (("release", "samples/release.pickle", None), ("linear3", "samples/linear3.pickle", None),
                            ("two_devices", "tests/robustness/data/two_devices.pickle", 12),
                            ("expandable", "tests/data/real/expandable_qwen_bs4.pickle", 30),
                            ("oom", "samples/oom.pickle", None)):
        with open(os.path.join(ROOT, path), "rb") as f:
            snap = pickle.load(f)
        with open(os.path.join(d, "seed_%s.mscp" % name), "wb") as f:
            f.write(stream(snap, cut))


if __name__ == "__main__":
    main()
