#!/usr/bin/env bash
# The fuzzing part of CI (called by scripts/test.sh; docs/SECURITY.md): builds the libFuzzer
# harnesses with clang into build/fuzz, replays each one's committed corpus and the
# regression inputs once (ctest), then fuzzes each for FUZZ_SECONDS (default 30) from that
# corpus. Any crash, sanitizer report, leak, timeout or out-of-memory fails the run; what
# it found is left in build/fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
fuzzers=(fuzz_pickle_reader fuzz_snapshot_loader fuzz_analysis fuzz_live_decoder)
if ! command -v clang++ >/dev/null; then
  echo "fuzz/ci.sh: clang++ is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMEMSCOPE_BUILD_FUZZ=ON -DMEMSCOPE_BUILD_UI=OFF -DMEMSCOPE_BUILD_TESTS=OFF -DMEMSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build/fuzz --target "${fuzzers[@]}"
status=0
# The corpus replays; FUZZ_LOG (set by scripts/test.sh) keeps ctest's output for its totals.
set +e
(cd build/fuzz && ctest --output-on-failure -R '_corpus$') 2>&1 | tee "${FUZZ_LOG:-/dev/null}"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e
work="build/fuzz/findings"
rm -rf "$work"
bash fuzz/seed_corpus.sh "$work/seeds" >/dev/null
for f in "${fuzzers[@]}"; do
  mkdir -p "$work/$f/new" "$work/$f/artifacts"
  if ! build/fuzz/fuzz/$f -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$work/$f/artifacts/" "$work/$f/new" "$work/seeds/$f" \
       >"$work/$f/log" 2>&1; then
    echo "fuzz/ci.sh: $f found a problem; input in $work/$f/artifacts, log in $work/$f/log" >&2
    grep -E "ERROR|runtime error|SUMMARY" "$work/$f/log" | head -5 >&2
    status=1
  else
    echo "fuzz/ci.sh: $f: $(grep -oE 'stat::number_of_executed_units: [0-9]+' "$work/$f/log" | grep -oE '[0-9]+') executions in ${seconds}s, nothing found"
  fi
done
exit "$status"
