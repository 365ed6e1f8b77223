#!/usr/bin/env bash
# The live tab as a user gets it, against issue 26's targets (docs/PERFORMANCE.md, "The live
# tab"): a generated recording served by `memscope replay-serve --rate R` into the main
# window's live tab (tools/memscope_ui_tool live), MEMSCOPE_LIVE_STATS logging every update.
#
#   bash bench/live_tab.sh BUILD EVENTS RATE [DETAIL]
#     BUILD   a build folder with app/memscope, tools/memscope_gen_snapshot, tools/memscope_ui_tool
#     EVENTS  the recording's events (10000000 for the 10M row); generated once in /tmp
#     RATE    events a second (0: as fast as the sender goes)
#     DETAIL  the bounded mode's detail in events (MEMSCOPE_LIVE_DETAIL_EVENTS; 0: every event)
#   SHOT=FILE.png saves the window at the end; STATS=FILE keeps the per-update lines
#   (default /tmp/live_tab_stats.jsonl).
set -euo pipefail
build="$1"
events="$2"
rate="$3"
detail="${4:-0}"
file="/tmp/live_gen_${events}.pickle"
[ -f "$file" ] || "$build/tools/memscope_gen_snapshot" --events "$events" --out "$file" >/dev/null
dir="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
socket="$dir/serve.sock"
"$build/app/memscope" replay-serve "$file" --rate "$rate" --socket "$socket" &
server=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
MEMSCOPE_LIVE_DETAIL_EVENTS="$detail" QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" \
  /usr/bin/time -f "wall %e s, max RSS %M KiB" \
  "$build/tools/memscope_ui_tool" live "$socket" "${STATS:-/tmp/live_tab_stats.jsonl}" "${SHOT:-}"
echo "file $(du -m "$file" | cut -f1) MiB ($file), rate $rate, detail $detail"
