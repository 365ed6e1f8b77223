#!/usr/bin/env bash
# Builds memscope and runs the whole test suite (the README's second command, and what CI
# runs): the formatting check, flake8 on the Python (.flake8), the suite (preset ci: the default build, warnings as errors),
# the packaging checks (scripts/package-check.sh: the .deb run from an unpacked root, the
# Qt-free `cli` build and the headless tests against it, the agent pip-installed offline),
# pytest on the pip-installed Python module and `memscope mcp` (scripts/python-check.sh),
# the suite again under ASan + UBSan (preset ci-asan), then the libFuzzer harnesses over
# their corpus and the regression inputs and a short fuzz (docs/SECURITY.md). Ends with one
# line counting the test programs that passed and failed across all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || exit 1
log="$(mktemp -d)"
# ccache when installed; with a base directory and no hashed working directory, the `cli`
# build reuses the core objects of the default one.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
fi
passed=0
failed=0

if ! bash scripts/check-format.sh; then
  failed=$((failed + 1))
fi
# The Python the project ships and tests (the agent, the module, the tests' scripts): .flake8.
if flake8 agent python tests; then
  echo "scripts/test.sh: flake8 clean (agent, python, tests)"
else
  echo "scripts/test.sh: flake8 found problems (above)" >&2
  failed=$((failed + 1))
fi

# count NAME FILE: adds the counts of ctest's summary line in FILE to the totals; a run
# with no summary counts as one failure.
count() {
  local summary total bad
  summary="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$2" 2>/dev/null | tail -1)"
  if [ -z "$summary" ]; then
    echo "scripts/test.sh: $1 ran no test" >&2
    failed=$((failed + 1))
    return
  fi
  total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")"
  bad="$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$summary")"
  passed=$((passed + total - bad))
  failed=$((failed + bad))
}

# run_ctest NAME ARGS…: runs ctest and counts it.
run_ctest() {
  local name="$1"; shift
  QT_QPA_PLATFORM=offscreen "$@" 2>&1 | tee "$log/$name.txt"
  count "$name" "$log/$name.txt"
}

build() {
  cmake --preset "$1" && cmake --build --preset "$1"
}

# free disk: the three builds take about 11 GB with full debug information (a run that ran
# out of it failed to link, "No space left on device")
disk() { echo "scripts/test.sh: $(df -Ph . | awk 'NR == 2 { print $4 }') free on this disk $1"; }
disk "before the builds"
build ci || exit 1
# One ctest job a core; the tests that start agents or wait on the clock run alone
# (RUN_SERIAL, tests/CMakeLists.txt).
jobs="$(nproc)"
run_ctest ci ctest --preset ci -j "$jobs"
if CLI_LOG="$log/cli_ctest.txt" bash scripts/package-check.sh; then
  package_ok=1
else
  package_ok=0
fi
count "the Qt-free build's tests" "$log/cli_ctest.txt"
if [ "$package_ok" -eq 0 ]; then
  echo "scripts/test.sh: the packaging checks failed (see above)" >&2
  failed=$((failed + 1))
fi
# The Python module and `memscope mcp` (issue 31): pip-installed from the `cli` build above.
if PY_LOG="$log/python.txt" bash scripts/python-check.sh; then
  python_ok=1
else
  python_ok=0
fi
count "the Python tests" "$log/python.txt"
if [ "$python_ok" -eq 0 ]; then
  echo "scripts/test.sh: the Python checks failed (see above)" >&2
  failed=$((failed + 1))
fi
disk "before the ASan build"
build ci-asan || exit 1
run_ctest ci-asan env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset ci-asan -j "$jobs"
if FUZZ_LOG="$log/fuzz_ctest.txt" bash fuzz/ci.sh; then
  fuzz_ok=1
else
  fuzz_ok=0
fi
count "the fuzz corpus replay" "$log/fuzz_ctest.txt"
if [ "$fuzz_ok" -eq 0 ]; then
  echo "scripts/test.sh: fuzzing found a problem (build/fuzz/findings)" >&2
  failed=$((failed + 1))
fi
echo
echo "memscope: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
