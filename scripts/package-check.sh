#!/usr/bin/env bash
# The packaging part of CI (called by scripts/test.sh after the default build; issue 18):
#  1. the .deb: cpack in build/default, `dpkg-deb -I`, unpacked into a temporary root and run
#     from there (--version, summary on a packaged sample, record finding the packaged agent);
#  2. the Qt-free command line: the `cli` preset (MEMSCOPE_BUILD_UI=OFF), only the targets the
#     headless tests need, ldd showing no Qt, report without the PNG;
#  3. the agent as a Python package: a fresh venv, `pip install ./agent` with no network,
#     `memscope-agent --replay FILE` recorded by the Qt-free binary, event for event;
#  4. the headless tests against the Qt-free binary (ctest log in CLI_LOG for test.sh's totals).
# Exits non-zero at the first failed step, saying which.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
version="$(head -1 agent/memscope_agent/VERSION)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "scripts/package-check.sh: $*" >&2; exit 1; }
step() { echo; echo "== package-check: $*"; }

step "Debian package"
rm -f build/default/memscope_*.deb
(cd build/default && cpack -G DEB >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack failed"; }
deb="$(ls build/default/memscope_"$version"_*.deb)"
dpkg-deb -I "$deb"
dpkg-deb -x "$deb" "$tmp/root"
usr="$tmp/root/usr"
for f in bin/memscope share/memscope/agent/memscope_agent/__init__.py share/memscope/agent/sitecustomize.py \
         share/memscope/agent/memscope_agent/VERSION share/memscope/samples/llm_bs16.pickle \
         share/applications/memscope.desktop share/mime/packages/memscope.xml \
         share/icons/hicolor/256x256/apps/memscope.png share/man/man1/memscope.1; do
  [ -e "$usr/$f" ] || fail "$deb lacks /usr/$f"
done
got="$(env -u DISPLAY "$usr/bin/memscope" --version)"
[ "$got" = "memscope $version" ] || fail "packaged memscope --version says '$got', expected 'memscope $version'"
env -u DISPLAY "$usr/bin/memscope" summary "$usr/share/memscope/samples/llm_bs16.pickle" | tee "$tmp/summary.txt"
grep -q "peak requested" "$tmp/summary.txt" || fail "packaged memscope summary printed no peak"
# record -- COMMAND puts the agent on PYTHONPATH: the packaged one, found next to the binary.
MEMSCOPE_AGENT_REPLAY="$usr/share/memscope/samples/oom.pickle" MEMSCOPE_AGENT_SPEED=0 \
  "$usr/bin/memscope" record -o "$tmp/launched.pickle" -- python3 -c \
  "import sys, time, memscope_agent; time.sleep(1); sys.exit(0 if memscope_agent.__file__.startswith('$usr/') else 3)" \
  || fail "packaged memscope record did not run the packaged agent"
"$usr/bin/memscope" summary "$tmp/launched.pickle" | grep -q "device 0: 69 events" \
  || fail "packaged memscope record did not record oom.pickle's 69 events through the packaged agent"
# import memscope for the system python3 (issue 31): the packaged module answers what the
# packaged binary prints; `memscope mcp` answers an MCP initialize.
pkg="$usr/lib/python3/dist-packages/memscope"
ls "$pkg"/_memscope*.so >/dev/null 2>&1 || fail "$deb lacks /usr/lib/python3/dist-packages/memscope/_memscope*.so"
[ -e "$pkg/__init__.py" ] || fail "$deb lacks /usr/lib/python3/dist-packages/memscope/__init__.py"
(cd "$tmp" && PYTHONPATH="$usr/lib/python3/dist-packages" /usr/bin/python3 -c "
import json, subprocess, sys, memscope
assert memscope.__file__.startswith('$usr/'), memscope.__file__
f = '$usr/share/memscope/samples/llm_bs16.pickle'
cli = json.loads(subprocess.run(['$usr/bin/memscope', 'summary', f, '--json'], capture_output=True, check=True).stdout)
sys.exit(0 if memscope.open(f).summary() == cli else 4)") || fail "the packaged Python module's summary() differs from memscope summary --json"
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
  | env -u DISPLAY "$usr/bin/memscope" mcp | grep -q '"protocolVersion":"2025-06-18"' || fail "packaged memscope mcp did not answer initialize"

step "Qt-free command line (preset ci-cli: cli with warnings as errors)"
cmake --preset ci-cli >/dev/null
cmake --build --preset ci-cli --target memscope tst_robustness tst_live_client tst_live_decoder tst_compare
cli="build/cli/app/memscope"
ldd "$cli" | tee "$tmp/ldd.txt"
if grep -qi 'qt\|qcustomplot' "$tmp/ldd.txt"; then
  fail "$cli links Qt (MEMSCOPE_BUILD_UI=OFF must build a Qt-free memscope)"
fi
[ "$("$cli" --version)" = "memscope $version" ] || fail "$cli --version"
"$cli" report samples/linear3.pickle --out "$tmp/report" >/dev/null 2>"$tmp/report.err"
grep -q "peak_report.png needs the GUI build" "$tmp/report.err" || fail "$cli report did not say the PNG needs the GUI"
for f in peak_report.csv timeline.csv report.json; do
  [ -s "$tmp/report/$f" ] || fail "$cli report wrote no $f"
done

step "agent as a Python package (offline pip install)"
# Debian's python3 -m venv has pip; --system-site-packages lends it python3-setuptools and
# python3-wheel, which a --no-build-isolation build needs (nothing is downloaded).
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
"$py" -m venv --system-site-packages "$tmp/venv"
cp -r agent "$tmp/agent-src"
PIP_FIND_LINKS= "$tmp/venv/bin/pip" install --quiet --no-index --no-build-isolation "$tmp/agent-src"
[ "$("$tmp/venv/bin/memscope-agent" --version)" = "memscope-agent $version" ] || fail "memscope-agent --version"
MEMSCOPE_AGENT_QUIET=1 "$tmp/venv/bin/memscope-agent" --replay samples/llm_bs2_cpp.pickle --speed 0 \
  --socket "$tmp/agent.sock" --linger 5 &
agent_pid=$!
"$cli" record --attach "$tmp/agent.sock" -o "$tmp/recorded.pickle"
wait "$agent_pid" || fail "memscope-agent --replay exited with an error"
"$cli" allocations samples/llm_bs2_cpp.pickle --csv "$tmp/original.csv"
"$cli" allocations "$tmp/recorded.pickle" --csv "$tmp/recorded.csv"
cmp "$tmp/original.csv" "$tmp/recorded.csv" || fail "the recording of memscope-agent --replay differs from the file"
echo "package-check: $(($(wc -l <"$tmp/recorded.csv") - 1)) allocations recorded through the pip-installed agent, equal to the file"

step "headless tests against the Qt-free memscope"
set +e
(cd build/cli && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -R '^(tst_robustness|tst_live_client|tst_live_decoder|tst_compare)$') \
  2>&1 | tee "${CLI_LOG:-/dev/null}"
cli_status="${PIPESTATUS[0]}"
set -e
[ "$cli_status" -eq 0 ] || fail "headless tests failed against the Qt-free memscope"
