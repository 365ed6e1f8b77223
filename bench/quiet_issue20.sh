#!/usr/bin/env bash
# Issue 20's figures, quiet, in one go (docs/PERFORMANCE.md, "Re-measured quiet, end of
# session 7"): memscope_perf BEFORE against this build alternated, optionally two builds
# alternated (the page warmer's A/B), `memscope diagnose`, memscope_page_cost,
# --repeat, bench/measure.py, the 100M file's `memscope summary` (read into the page cache
# first) and the window at 100M, then frame times at 10M. Needs /tmp/gen_930k, gen_10m and
# gen_100m (.pickle and .expected.json: memscope_gen_snapshot --events N --out F).
# About 15 minutes; run it with nothing else on the machine.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build/default}
BEFORE=${1:?usage: bench/quiet_issue20.sh BEFORE/memscope_perf [NOWARM/memscope_perf WARM/memscope_perf]}
O=${OUT:-/tmp/quiet-issue20-$(date +%H%M)}
mkdir -p $O
uptime | tee $O/load.txt
python3 bench/ab_perf.py 12 /tmp/gen_930k.pickle $BEFORE $B/bench/memscope_perf > $O/ab_930k.txt 2>&1
python3 bench/ab_perf.py 5 /tmp/gen_10m.pickle $BEFORE $B/bench/memscope_perf > $O/ab_10m.txt 2>&1
if [ $# -ge 3 ]; then
  python3 bench/ab_perf.py 10 /tmp/gen_930k.pickle "$2" "$3" > $O/ab_warm_930k.txt 2>&1
  python3 bench/ab_perf.py 6 /tmp/gen_10m.pickle "$2" "$3" > $O/ab_warm_10m.txt 2>&1
fi
uptime | tee -a $O/load.txt
for f in gen_930k:5 gen_10m:3; do n=${f%%:*}; k=${f##*:}; for i in $(seq $k); do
  /usr/bin/time -f "$n diagnose %e s wall %U user %S sys %M KiB" $B/app/memscope diagnose /tmp/$n.pickle >/dev/null 2>>$O/diagnose.txt; done; done
uptime | tee -a $O/load.txt
for i in 1 2 3; do $B/bench/memscope_page_cost >> $O/page_cost.txt; sleep 3; done
$B/bench/memscope_perf /tmp/gen_930k.pickle --repeat 3 > $O/repeat_930k.txt
$B/bench/memscope_perf /tmp/gen_10m.pickle --repeat 3 > $O/repeat_10m.txt
uptime | tee -a $O/load.txt
python3 bench/measure.py --perf $B/bench/memscope_perf --runs 3 \
  /tmp/gen_930k.pickle:/tmp/gen_930k.expected.json /tmp/gen_10m.pickle:/tmp/gen_10m.expected.json \
  > $O/measure.md 2> $O/measure.json
uptime | tee -a $O/load.txt
fincore /tmp/gen_100m.pickle > $O/fincore_before.txt; cat /tmp/gen_100m.pickle > /dev/null; fincore /tmp/gen_100m.pickle >> $O/fincore_before.txt
/usr/bin/time -f "summary100m %e s wall %U user %S sys %M KiB" $B/app/memscope summary /tmp/gen_100m.pickle > $O/summary100m.txt 2>&1
uptime | tee -a $O/load.txt
QT_QPA_PLATFORM=offscreen /usr/bin/time -f "%e s wall %U user %S sys %M KiB" $B/tools/memscope_ui_tool appopen /tmp/gen_100m.pickle > $O/appopen100m.txt 2>&1
uptime | tee -a $O/load.txt
for i in 1 2 3; do QT_QPA_PLATFORM=offscreen $B/tools/memscope_ui_tool frametime /tmp/gen_10m.pickle >> $O/frametime10m.txt 2>&1; done
echo done > $O/DONE
