#!/usr/bin/env bash
# Rewrites tests/data/golden/ from what the headless commands print now (after a change of
# output that is meant, or after merging branches that changed outputs): builds memscope and
# tst_golden with the default preset, runs tst_golden and tst_formats with MEMSCOPE_UPDATE_GOLDEN=1 (it
# rewrites the goldens that differ and deletes those no row writes), then lists what changed.
# Review `git diff tests/data/golden` before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default --target memscope tst_golden
cmake --build --preset default --target tst_formats
MEMSCOPE_UPDATE_GOLDEN=1 QT_QPA_PLATFORM=offscreen build/default/tests/tst_golden -silent
MEMSCOPE_UPDATE_GOLDEN=1 QT_QPA_PLATFORM=offscreen build/default/tests/tst_formats -silent
git status --short -- tests/data/golden tests/data/formats
