#!/usr/bin/env python3
"""Writes small seed inputs for the fuzzers, cut down from real snapshots of this repository
(trusted files; memscope itself never runs Python on a pickle). Run from the repository root:
    python3 fuzz/make_seeds.py
Seeds go to fuzz/corpus/<fuzzer>/seed_*; the real small samples (samples/*.pickle under
16 KiB, tests/data/*) are passed to the fuzzers as further corpus directories by
fuzz/run_fuzzers.sh rather than copied."""
import copy
import gzip
import json
import os
import pickle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return pickle.load(f)


def trim(snap, events, segments, blocks=4):
    out = copy.deepcopy({k: v for k, v in snap.items() if k != "device_traces" and k != "segments"})
    out["device_traces"] = [t[:events] for t in snap["device_traces"]]
    out["segments"] = []
    for s in snap["segments"][:segments]:
        s = dict(s)
        s["blocks"] = s["blocks"][:blocks]
        out["segments"].append(s)
    if "external_annotations" in out:
        out["external_annotations"] = out["external_annotations"][:4]
    return out


def main():
    seeds = {
        "expandable": trim(load("tests/data/real/expandable_qwen_bs4.pickle"), 60, 2),
        "overflow": trim(load("tests/data/real/overflow_qwen_bs4.pickle"), 60, 2),
        "late_start": trim(load("tests/data/oracle/oracle_qwen_bs4_late.pickle"), 60, 3),
        "cpp_frames": trim(load("tests/data/oracle/oracle_qwen4_bs2_all.pickle"), 30, 1, 2),
        "libtorch": trim(load("samples/libtorch_mlp.pickle"), 12, 1, 2),
        "oom": load("samples/oom.pickle"),
    }
    for fuzzer in ("fuzz_pickle_reader", "fuzz_snapshot_loader"):
        d = os.path.join(ROOT, "fuzz", "corpus", fuzzer)
        os.makedirs(d, exist_ok=True)
        for name, snap in seeds.items():
            for proto in (0, 2, 4, 5):
                if (fuzzer == "fuzz_pickle_reader" and proto not in (0, 4)) or (proto == 5 and name != "oom"):
                    continue
                with open(os.path.join(d, "seed_%s.p%d.pickle" % (name, proto)), "wb") as f:
                    pickle.dump(snap, f, protocol=proto)
        if fuzzer == "fuzz_snapshot_loader":
            small = trim(seeds["expandable"], 12, 1, 2)
            with open(os.path.join(d, "seed_expandable.json"), "w") as f:
                json.dump(small, f)
            with open(os.path.join(d, "seed_expandable.pickle.gz"), "wb") as f:
                f.write(gzip.compress(pickle.dumps(small, protocol=4), mtime=0))


if __name__ == "__main__":
    main()
