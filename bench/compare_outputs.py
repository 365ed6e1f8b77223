#!/usr/bin/env python3
# The before/after comparison of issue 30 (as session 7's): two memscope commands on every
# samples/*.pickle and tests/**/*.pickle, `diagnose --json`, `allocations --csv -` and
# `summary --json`, stdout, stderr and exit status compared byte for byte (tests/**: tests/data and
# tests/robustness/data).
#   bench/compare_outputs.py "OLD/memscope" "NEW/memscope --threads 8" [...more commands]
# Prints one line per difference and a count; exits 1 if any.
import glob, os, shlex, subprocess, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
files = sorted(glob.glob(os.path.join(root, 'samples', '*.pickle')) +
               glob.glob(os.path.join(root, 'tests', '**', '*.pickle'), recursive=True))
commands = [shlex.split(c) for c in sys.argv[1:]]
if len(commands) < 2:
    sys.exit('usage: compare_outputs.py "CMD_A" "CMD_B" [...]')
kinds = [['diagnose', '{f}', '--json'], ['allocations', '{f}', '--csv', '-'], ['summary', '{f}', '--json']]

def run(cmd, kind, f):
    exe, extra = cmd[0], cmd[1:]
    args = [exe, kind[0]] + [a.replace('{f}', f) for a in kind[1:]] + extra
    p = subprocess.run(args, capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr

differences = comparisons = 0
for f in files:
    for kind in kinds:
        base = run(commands[0], kind, f)
        for cmd in commands[1:]:
            other = run(cmd, kind, f)
            comparisons += 1
            if other != base:
                differences += 1
                what = 'status' if other[0] != base[0] else 'stdout' if other[1] != base[1] else 'stderr'
                print(f'DIFF {what}: {os.path.relpath(f, root)} {kind[0]}: {" ".join(cmd)}')
print(f'{len(files)} files, {comparisons} comparisons, {differences} differences')
sys.exit(1 if differences else 0)
