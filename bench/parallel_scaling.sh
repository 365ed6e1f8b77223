#!/usr/bin/env bash
# Issue 30's scaling table: `memscope diagnose` and `memscope summary` at --threads 1, 2, 4,
# 8, 16 on generated files of 930k, 10M and 100M events, with Python's pickle.load at 930k
# for the ratio. The same script on this VM and on the GPU host (the device tool, the
# Qt-free build). Every run is one line of JSON in $OUT/scaling.jsonl:
#   {"file": "gen_930k", "command": "diagnose", "threads": 4, "wall_s": 0.12, "user_s": ...,
#    "sys_s": ..., "max_rss_kib": ..., "file_bytes": ...}
# Rounds alternate the thread counts (1 2 4 8 16, then 16 8 4 2 1, ...), so a slow spell of a
# shared machine falls on all of them.
#
#   MEMSCOPE=build/dev/app/memscope GEN=build/dev/tools/memscope_gen_snapshot \
#   SIZES="930000:5 10000000:3 100000000:1" THREADS="1 2 4 8 16" OUT=/tmp/scaling \
#   bash bench/parallel_scaling.sh
#
# SIZES is events:rounds; DATA the folder for the generated files (default /tmp). A size of
# 100M also gets its file read into the page cache first (the figures are with it cached).
# LIMIT_S bounds the whole script (default 3600): what is left undone is skipped, not waited for.
set -u
MEMSCOPE=${MEMSCOPE:?set MEMSCOPE to the memscope executable}
GEN=${GEN:?set GEN to memscope_gen_snapshot}
SIZES=${SIZES:-930000:5 10000000:3}
THREADS=${THREADS:-1 2 4 8 16}
OUT=${OUT:-/tmp/scaling-$(date +%H%M)}
DATA=${DATA:-/tmp}
LIMIT_S=${LIMIT_S:-3600}
PYLOAD=${PYLOAD:-3} # rounds of pickle.load at the smallest size (0: none)
START=$(date +%s)
mkdir -p "$OUT"
J="$OUT/scaling.jsonl"
left() { echo $((LIMIT_S - ($(date +%s) - START))); }
{ uname -a; nproc; lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)"; free -g; uptime; } > "$OUT/machine.txt" 2>&1

name_of() { case $1 in 930000) echo gen_930k;; 10000000) echo gen_10m;; 100000000) echo gen_100m;; *) echo gen_$1;; esac; }

timed() { # file command threads
  local f=$1 cmd=$2 t=$3 r
  [ "$(left)" -gt 5 ] || return 0
  /usr/bin/time -o "$OUT/time.txt" -f "%e %U %S %M" timeout "$(left)" "$MEMSCOPE" "$cmd" "$DATA/$f.pickle" --threads "$t" \
    >/dev/null 2>"$OUT/err.txt"
  r=$(tail -1 "$OUT/time.txt")
  set -- $r
  [ $# -ge 4 ] || return 0
  echo "{\"file\": \"$f\", \"command\": \"$cmd\", \"threads\": $t, \"wall_s\": $1, \"user_s\": $2, \"sys_s\": $3, \"max_rss_kib\": $4, \"file_bytes\": $(stat -c %s "$DATA/$f.pickle")}" >> "$J"
}

first=1
for s in $SIZES; do
  events=${s%%:*}; rounds=${s##*:}; f=$(name_of "$events")
  if [ ! -s "$DATA/$f.pickle" ]; then
    /usr/bin/time -f "gen $f %e s" "$GEN" --events "$events" --out "$DATA/$f.pickle" >/dev/null 2>>"$OUT/gen.txt"
  fi
  cat "$DATA/$f.pickle" > /dev/null # in the page cache, as a file just written
  if [ $first = 1 ] && [ "$PYLOAD" -gt 0 ] && command -v python3 >/dev/null; then
    for i in $(seq "$PYLOAD"); do
      /usr/bin/time -o "$OUT/time.txt" -f "%e %M" python3 -c "import pickle; pickle.load(open('$DATA/$f.pickle','rb'))" >/dev/null
      r=$(tail -1 "$OUT/time.txt")
      set -- $r
      echo "{\"file\": \"$f\", \"command\": \"pickle.load\", \"threads\": 1, \"wall_s\": $1, \"max_rss_kib\": $2, \"python\": \"$(python3 -V 2>&1)\"}" >> "$J"
    done
  fi
  first=0
  for r in $(seq "$rounds"); do
    order=$THREADS
    [ $((r % 2)) = 0 ] && order=$(echo $THREADS | tr ' ' '\n' | tac | tr '\n' ' ')
    for t in $order; do
      if [ "$events" -lt 100000000 ]; then timed "$f" diagnose "$t"; fi
      timed "$f" summary "$t"
    done
  done
  if [ "$events" -ge 100000000 ]; then timed "$f" diagnose "$(echo $THREADS | tr ' ' '\n' | tail -1)"; fi
done
echo done > "$OUT/DONE"
