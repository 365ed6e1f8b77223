#!/usr/bin/env bash
# Every view of the window at 1000x700 and 1600x1000 (and a few at 2x) into
# docs/screenshots/window, the set docs/UI.md shows and links. Look at each one afterwards.
#
#   bash scripts/window-screenshots.sh [BUILD]   (BUILD: a build folder with the UI; build/default)
#
# Needs Xvfb (xvfb-run) and optipng. Takes a few minutes: each size opens the recordings anew.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/default}"
tool="$build/tools/memscope_ui_tool"
app="$build/app/memscope"
out="docs/screenshots/window"
xvfb=(xvfb-run -a -s "-screen 0 2100x1500x24")
llm=samples/llm_bs16.pickle
rank0=tests/data/ranks/ddp_rank0.pickle
rank1=tests/data/ranks/ddp_rank1.pickle
lightning=tests/data/lightning/pl_plain_32-true.pickle.gz
cmp_a=tests/data/compare/cmp_qwen_bs8_fp32.pickle
cmp_b=tests/data/compare/cmp_qwen_bs8_amp.pickle
tmp="$(mktemp -d)"
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT

shoot() { # SIZE DIR [QT_SCALE_FACTOR]
  local size="$1" dir="$2" scale="${3:-1}"
  mkdir -p "$dir"
  export MEMSCOPE_SHOT_SIZE="$size" QT_SCALE_FACTOR="$scale"
  "${xvfb[@]}" "$tool" screenshots "$dir" "$llm" "$rank0" "$lightning" "compare=$cmp_a,$cmp_b" "job=$rank0,$rank1"
  [ "$scale" = 1 ] || return 0
  "${xvfb[@]}" "$tool" flame "$dir" "$llm"
  "${xvfb[@]}" "$tool" whatif "$dir" "$llm" 16 256 6
  "${xvfb[@]}" "$tool" compare "$dir" "$cmp_a" "$cmp_b"
  local sock="$tmp/serve.sock"
  "$app" replay-serve "$llm" --socket "$sock" --rate 20000 &
  server=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  "${xvfb[@]}" "$tool" live "$sock" "$tmp/stats.jsonl" "$dir/live.png"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

for size in 1000x700 1600x1000; do
  shoot "$size" "$tmp/$size"
done
shoot 1000x700 "$tmp/2x" 2

# The names docs/UI.md uses.
for dir in "$tmp"/1000x700 "$tmp"/1600x1000 "$tmp"/2x; do
  for f in "$dir"/pl_plain_32-true*; do
    [ -e "$f" ] || continue
    mv "$f" "$dir/lightning_plain${f##*/pl_plain_32-true.pickle}"
  done
  [ -e "$dir/compare_cmp_qwen_bs8_fp32.png" ] && mv "$dir/compare_cmp_qwen_bs8_fp32.png" "$dir/compare.png"
  [ -e "$dir/job_ddp_rank0.png" ] && mv "$dir/job_ddp_rank0.png" "$dir/job_ddp.png"
  rm -f "$dir"/*_timeline_chart.png
done
for size in 1000x700 1600x1000; do
  rm -f "$out/$size"/*.png
  cp "$tmp/$size"/*.png "$out/$size/"
done
rm -f "$out/2x"/*.png
for v in llm_bs16_timeline_breakdown llm_bs16_call_sites llm_bs16_estimator compare; do
  cp "$tmp/2x/$v.png" "$out/2x/"
done
optipng -quiet -o2 "$out"/*/*.png
ls -l "$out"/*/ | awk '{s += $5} END {print "screenshots: " NR " files, " int(s / 1024) " KiB"}'
