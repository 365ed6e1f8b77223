#!/usr/bin/env bash
# The Python part of CI (issue 31; called by scripts/test.sh after scripts/package-check.sh,
# whose Qt-free `cli` build it reuses: only the module is compiled here):
#  1. `pip install --no-build-isolation ./python` into a fresh venv made with
#     `python3 -m venv --system-site-packages` (Debian's pybind11, numpy, pandas, matplotlib,
#     pytest, nbclient and ipykernel; nothing downloaded), MEMSCOPE_BUILD_DIR=build/cli;
#  2. pytest over tests/python on that installed module, from outside the source tree: the
#     module against `memscope summary/allocations/diagnose/diff/whatif --json` on the samples,
#     broken and malicious files, `memscope mcp` spoken to over stdio, the example notebook.
# Writes a ctest-style summary line for test.sh's count() to PY_LOG (one test per pytest
# test; a skipped one counts as failed, and pytest's exit 5, no test collected, is a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
log="${PY_LOG:-/dev/null}"
: >"$log" 2>/dev/null || true
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "scripts/python-check.sh: $*" >&2; exit 1; }

py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
cmake --preset ci-cli >/dev/null
cmake --build --preset ci-cli --target memscope
cli="$root/build/cli/app/memscope"

echo "== python-check: pip install ./python (MEMSCOPE_BUILD_DIR=build/cli)"
"$py" -m venv --system-site-packages "$tmp/venv"
MEMSCOPE_BUILD_DIR="$root/build/cli" PIP_FIND_LINKS= "$tmp/venv/bin/pip" install --quiet --no-index \
  --no-build-isolation "$root/python" || fail "pip install ./python failed"
(cd "$tmp" && "$tmp/venv/bin/python" -c "import memscope, sys; print('memscope', memscope.__version__, memscope.__file__)")
# setup.py configured build/cli with the venv's interpreter, which goes with $tmp: back to the preset's.
cmake --preset ci-cli >/dev/null

echo "== python-check: pytest tests/python on the installed module"
set +e
(cd "$tmp" && MEMSCOPE_CLI="$cli" MPLBACKEND=Agg "$tmp/venv/bin/python" -m pytest -p no:cacheprovider -q -rs \
  --junitxml="$tmp/junit.xml" "$root/tests/python")
status=$?
set -e
[ "$status" -eq 5 ] && fail "pytest collected no test"
[ -s "$tmp/junit.xml" ] || fail "pytest wrote no results (exit $status)"
"$py" - "$tmp/junit.xml" "$status" >"$log" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
total = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get(k, 0)) for s in suites for k in ("failures", "errors", "skipped"))
if int(sys.argv[2]) not in (0, 1):  # interrupted, internal error, usage error: the whole run failed
    bad = max(bad, 1)
if total == 0:
    sys.exit(0)  # no summary line: test.sh counts it as a failure
print(f"{100 * (total - bad) // total}% tests passed, {bad} tests failed out of {total}")
PY
cat "$log" 2>/dev/null || true
[ "$status" -eq 0 ] || fail "pytest failed (exit $status)"
