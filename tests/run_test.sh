#!/usr/bin/env bash
# run_test.sh ALLOWLIST COMMAND [ARGS…]: runs one test program for ctest and fails it when it
# skipped anything that ALLOWLIST does not list. A skipped test did not run, and ctest
# would count it as passed.
#
# Qt Test prints "SKIP   : Class::function(row) reason"; Python's unittest -v prints
# "test_x (module.Class.test_x) ... skipped 'reason'". ALLOWLIST has one skip a line,
# "KEY  reason", KEY being Class::function or module.Class.test_x; # starts a comment.
set -uo pipefail
allow="$1"
shift
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
skips="$( { grep -E '^SKIP +: ' "$out" | sed -E 's/^SKIP +: ([A-Za-z0-9_:]+).*/\1/'
            grep -E ' \.\.\. skipped' "$out" | sed -E 's/^[^ ]+ \(([^)]+)\) \.\.\. skipped.*/\1/'; } | sort -u)"
unlisted=0
for key in $skips; do
  if ! grep -vE '^\s*(#|$)' "$allow" | awk '{print $1}' | grep -qxF "$key"; then
    echo "run_test.sh: $key skipped, and $allow does not list it: a skipped test did not run" >&2
    unlisted=1
  else
    echo "run_test.sh: $key skipped (listed in $(basename "$allow"): $(grep -E "^$key\s" "$allow" | sed -E 's/^[^ \t]+\s+//'))"
  fi
done
if [ "$rc" -ne 0 ]; then
  exit "$rc"
fi
exit "$unlisted"
