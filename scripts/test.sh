#!/usr/bin/env bash
# Builds memscope and runs the whole test suite (the README's second command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
QT_QPA_PLATFORM=offscreen ctest --preset default
# Sanitizers (docs/SECURITY.md): the whole suite again under ASan + UBSan, then the
# libFuzzer harnesses over their corpus and the regression inputs, and a short fuzz.
cmake --preset asan
cmake --build --preset asan
QT_QPA_PLATFORM=offscreen ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan
bash fuzz/ci.sh
