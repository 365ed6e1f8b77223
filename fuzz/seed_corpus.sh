#!/usr/bin/env bash
# Assembles the seed corpus of each fuzzer into OUT/<fuzzer>/: the committed corpus
# (fuzz/corpus/<fuzzer>, made by make_seeds.py / make_live_seeds.py and minimised fuzzing
# results), the small real snapshots and test files, and the regression inputs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: fuzz/seed_corpus.sh OUT}"
for f in fuzz_pickle_reader fuzz_snapshot_loader fuzz_live_decoder fuzz_analysis; do
  mkdir -p "$out/$f"
  cp "$root/fuzz/corpus/$f/"* "$out/$f/" 2>/dev/null || true
done
small=()
for p in "$root"/samples/*.pickle "$root"/tests/data/*.pickle "$root"/tests/data/*.gz "$root"/tests/data/*.json \
         "$root"/tests/robustness/data/* "$root"/tests/robustness/regressions/*; do
  [ -f "$p" ] && [ "$(stat -c %s "$p")" -le 65536 ] && small+=("$p")
done
for p in "${small[@]}"; do
  case "$p" in
    *.json|*.gz) cp "$p" "$out/fuzz_snapshot_loader/"; cp "$p" "$out/fuzz_analysis/" ;;
    *) cp "$p" "$out/fuzz_snapshot_loader/"; cp "$p" "$out/fuzz_analysis/"; cp "$p" "$out/fuzz_pickle_reader/" ;;
  esac
done
echo "seeds: $(ls "$out/fuzz_pickle_reader" | wc -l) pickle_reader, $(ls "$out/fuzz_snapshot_loader" | wc -l) snapshot_loader, $(ls "$out/fuzz_live_decoder" | wc -l) live_decoder"
