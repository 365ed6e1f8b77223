"""Opening a snapshot from Python against the command line (docs/PYTHON.md, "Speed").

    PYTHONPATH=build/cli/python python3 bench/python_open.py build/cli/app/memscope FILE...

Per file, the median of 7 runs of: `memscope summary FILE --json` as a process (what a shell
or a notebook's `!memscope` pays), memscope.open(FILE).summary() in this process, `memscope
allocations FILE --csv /dev/null`, memscope.open(FILE).allocations() (the DataFrame), and
pickle.load of the file for scale (our own sample files only: the product never unpickles).
"""

import gzip
import pickle
import statistics
import subprocess
import sys
import time

import memscope


def median_ms(fn, n=7):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def load_pickle(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return pickle.load(f)


cli = sys.argv[1]
print("| file | events | `memscope summary --json` (process) | `open().summary()` | `memscope allocations --csv` (process) "
      "| `open().allocations()` | `pickle.load` |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for path in sys.argv[2:]:
    events = sum(d["events"] for d in memscope.open(path).summary()["devices"])
    row = [
        median_ms(lambda: subprocess.run([cli, "summary", path, "--json"], stdout=subprocess.DEVNULL, check=True)),
        median_ms(lambda: memscope.open(path).summary()),
        median_ms(lambda: subprocess.run([cli, "allocations", path, "--csv", "/dev/null"], check=True)),
        median_ms(lambda: memscope.open(path).allocations()),
        median_ms(lambda: load_pickle(path)),
    ]
    print(f"| {path} | {events:,} | " + " | ".join(f"{x:.1f} ms" for x in row) + " |")
