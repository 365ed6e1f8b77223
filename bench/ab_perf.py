#!/usr/bin/env python3
# Alternates memscope_perf binaries run by run on one file (ROUNDS FILE BIN_A BIN_B ...) and
# prints each one's medians and best run per stage: the way to compare two builds on a noisy machine.
# A binary may carry arguments, quoted as one: "build/bench/memscope_perf --threads 2".
import json, shlex, subprocess, sys, statistics
rounds = int(sys.argv[1]); f = sys.argv[2]; bins = sys.argv[3:]
res = {b: [] for b in bins}
for r in range(rounds):
    order = bins if r % 2 == 0 else list(reversed(bins))
    for b in order:
        args = shlex.split(b)
        out = subprocess.run([args[0], f] + args[1:], capture_output=True, text=True).stdout
        txt = out[out.index('{'):]
        res[b].append(json.loads(txt))
for b in bins:
    rs = res[b]
    def m(k): return statistics.median(x[k] for x in rs)
    print(f"{b}: total med {m('total_s'):.3f} min {min(x['total_s'] for x in rs):.3f} | load {m('load_s'):.3f} (min {min(x['load_s'] for x in rs):.3f}, CPU {m('cpu_load_s'):.3f}) replay {m('replay_s'):.3f} attr {m('attribution_s'):.3f} | peak {max(x['peak_rss_mib'] for x in rs):.0f} MiB")
