"""Derive the multi-device OOM fixtures from the real two_gpus.pickle (trusted: we recorded it).

    python3 make_oom_fixtures.py            # writes next to this script

two_gpus_oom1.pickle: an `oom` entry appended to device 1's trace, the shape torch writes
when a cudaMalloc fails (no addr; size = the request; device_free; the frames of the call),
as on the real three-GPU job whose OOM was on device 1 while memscope opened device 0.
two_gpus_oom0.pickle: the same on device 0, whose requested peak is the lower of the two,
so a device chosen by peak alone would be the wrong one. Everything else is unchanged.
"""
import copy
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))


class Refuse(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused {module}.{name}")


def with_oom(snapshot, device):
    s = copy.deepcopy(snapshot)
    trace = s["device_traces"][device]
    last = trace[-1]
    allocs = [e for e in trace if e["action"] == "alloc" and e.get("frames")]
    trace.append({
        "action": "oom",
        "device_free": 64 * 1024 * 1024,
        "size": 8 * 1024 ** 3,  # 8 GiB asked: more than the device has free
        "stream": 0,
        "time_us": last["time_us"] + 1000,
        "compile_context": "N/A",
        "user_metadata": "",
        "frames": allocs[-1]["frames"],
    })
    return s


def main():
    with open(os.path.join(HERE, "two_gpus.pickle"), "rb") as f:
        snapshot = Refuse(f).load()
    for device in (0, 1):
        out = os.path.join(HERE, f"two_gpus_oom{device}.pickle")
        with open(out, "wb") as f:
            pickle.dump(with_oom(snapshot, device), f, protocol=4)
        print(out)


if __name__ == "__main__":
    main()
