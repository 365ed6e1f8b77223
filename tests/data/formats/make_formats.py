#!/usr/bin/env python3
"""Makes tests/data/formats/: one small file per snapshot variant that real users' files
carry (see docs/snapshot-format.md), each derived from a real snapshot of ours.

Run from the repository root:  python3 tests/data/formats/make_formats.py
Python's pickle loads these trusted files of ours (never a stranger's). The goldens
(*.summary.json) are written by tst_formats with MEMSCOPE_UPDATE_GOLDEN=1, not here.
"""

import copy
import json
import os
import pickle

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.dirname(os.path.abspath(__file__))
U64_MAX = 2**64 - 1


def load(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return pickle.load(f)


def dump(name, obj, protocol=4):
    with open(os.path.join(OUT, name), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def dump_json(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f)


def entries(snap):
    for trace in snap["device_traces"]:
        yield from trace


def frames_of(snap):
    """Every distinct frame dict (frames are shared objects in a real pickle)."""
    seen = {}
    for e in entries(snap):
        for fr in e.get("frames") or []:
            seen[id(fr)] = fr
    for seg in snap["segments"]:
        for fr in seg.get("frames") or []:
            seen[id(fr)] = fr
        for b in seg["blocks"]:
            for fr in b.get("frames") or []:
                seen[id(fr)] = fr
    return list(seen.values())


def main():
    release = load("samples/release.pickle")   # 39 events, one segment_free: a whole trace
    linear3 = load("samples/linear3.pickle")   # 25 events
    oom = load("samples/oom.pickle")           # 69 events, an oom with device_free
    generate = load("samples/generate_keep.pickle")  # 2207 events: cut to a few hundred

    # torch.compile/Inductor frames: line = 2^64 - 1 (LONG1 of 9 bytes), FX node fields.
    s = copy.deepcopy(release)
    for fr in frames_of(s):
        if fr["name"] in ("_apply", "forward"):
            fr["line"] = U64_MAX
            fr["fx_node_op"] = "call_function"
            fr["fx_node_name"] = "addmm"
            fr["fx_node_target"] = "aten.addmm.default"
            fr["fx_original_trace"] = 'File "train.py", line 42, in forward\n    y = self.fc(x)'
    dump("compile_line.pickle", s)
    dump_json("compile_line.json", s)

    # Integers past 2^63 elsewhere: raw stream pointers (large ints, several streams), one
    # stream past 2^63.
    s = copy.deepcopy(linear3)
    for i, e in enumerate(entries(s)):
        e["stream"] = [0, 94813258362880, 2**63 + 4096][i % 3] if e["action"] in ("alloc", "free_requested", "free_completed") else 0
    dump("big_streams.pickle", s)

    # No time_us (torch <= 2.1).
    s = copy.deepcopy(release)
    for e in entries(s):
        e.pop("time_us", None)
        e.pop("compile_context", None)
        e.pop("user_metadata", None)
    s.pop("external_annotations", None)
    dump("no_time.pickle", s)

    # PyTorch 2.0: blocks with `history` and no address; segments without frames, pool id
    # or is_expandable; `free` instead of free_completed; a snapshot action with a size.
    s = copy.deepcopy(release)
    for seg in s["segments"]:
        for k in ("frames", "segment_pool_id", "is_expandable", "requested_size"):
            seg.pop(k, None)
        for b in seg["blocks"]:
            fr = b.pop("frames", [])
            b.pop("address", None)
            req = b.pop("requested_size", b["size"])
            if b["state"] == "active_allocated":
                b["history"] = [{"addr": 0, "real_size": req, "frames": fr}]
    for e in entries(s):
        e.pop("time_us", None)
        e.pop("compile_context", None)
        e.pop("user_metadata", None)
        if e["action"] == "free_completed":
            e["action"] = "free"
    s["device_traces"][0] = [e for e in s["device_traces"][0] if e["action"] != "free_requested"]
    s["device_traces"][0].append({"action": "snapshot", "addr": 0, "size": 34603008, "stream": 0, "frames": []})
    s.pop("allocator_settings", None)
    s.pop("external_annotations", None)
    dump("torch20_history.pickle", s, protocol=2)

    # The annotate action (with its metadata) and user_metadata as JSON text,
    # compile_context, internal_metadata.
    s = copy.deepcopy(release)
    t = s["device_traces"][0]
    out = []
    for i, e in enumerate(t):
        e["user_metadata"] = json.dumps({"step": i // 10, "phase": "train"})
        e["compile_context"] = "[0/0] forward" if i % 2 else "N/A"
        e["internal_metadata"] = {"graph_id": i % 3}
        out.append(e)
        if i in (5, 20):
            out.append({"action": "annotate", "addr": 0, "size": 0, "stream": 0, "time_us": e["time_us"],
                        "user_metadata": json.dumps({"marker": "step %d" % i}), "frames": []})
    s["device_traces"][0] = out
    dump("annotate_metadata.pickle", s)

    # OOM with device_free, on device 1 while device 0 is quiet.
    s = copy.deepcopy(oom)
    s["device_traces"] = [[], s["device_traces"][0]]
    for seg in s["segments"]:
        seg["device"] = 1
    dump("oom_device1.pickle", s)

    # CUDA-graph / MemPool private pools: pool_id per event, segment_pool_id per segment.
    s = copy.deepcopy(linear3)
    private = {seg["address"] for seg in s["segments"][1:]}
    for seg in s["segments"]:
        seg["segment_pool_id"] = (1, 0) if seg["address"] in private else (0, 0)
    for e in entries(s):
        e["pool_id"] = (1, 0) if e["action"] == "alloc" and e["addr"] in private else (0, 0)
    dump("pools.pickle", s)

    # forward_frames: the forward a backward allocation belongs to.
    s = copy.deepcopy(linear3)
    for i, e in enumerate(entries(s)):
        if e["action"] == "alloc" and i % 2:
            e["forward_frames"] = ['File "train.py", line 42, in forward', 'File "model.py", line 7, in fc']
    dump("forward_frames.pickle", s)

    # Pinned host memory: host_segments (device -1) and host_traces.
    s = copy.deepcopy(release)
    host = copy.deepcopy(linear3)
    s["host_segments"] = host["segments"]
    for seg in s["host_segments"]:
        seg["device"] = -1
    s["host_traces"] = host["device_traces"][0]
    dump("host.pickle", s)

    # A top-level list of segments: a pickled torch.cuda.memory_snapshot().
    dump("top_list.pickle", copy.deepcopy(release)["segments"])

    # Protocol 5 (Python 3.14's default).
    dump("protocol5.pickle", copy.deepcopy(release), protocol=5)

    # Empty traces (history never enabled): segments only.
    s = copy.deepcopy(release)
    s["device_traces"] = [[]]
    dump("empty_traces.pickle", s)

    # A ring buffer that wrapped: the oldest 1900 entries dropped, max_entries = what is left.
    s = copy.deepcopy(generate)
    s["device_traces"][0] = s["device_traces"][0][-300:]
    s["allocator_settings"]["trace_alloc_max_entries"] = 300
    s["allocator_settings"]["trace_alloc_overflowed"] = True
    dump("ring_wrapped.pickle", s)

    # Everything newer at once, as JSON (the viewer's other input).
    s = copy.deepcopy(linear3)
    for i, e in enumerate(entries(s)):
        e["pool_id"] = [0, 0]
        if i % 3 == 0:
            e["forward_frames"] = ["forward at model.py:7"]
        for fr in e.get("frames") or []:
            if fr["name"] == "forward":
                fr["line"] = U64_MAX
    s["host_traces"] = []
    dump_json("newer_keys.json", s)

    # A Git LFS pointer checked out instead of the file.
    with open(os.path.join(OUT, "lfs_pointer.pickle"), "w") as f:
        f.write("version https://git-lfs.github.com/spec/v1\n"
                "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                "size 8355339\n")


if __name__ == "__main__":
    main()
