#!/usr/bin/env bash
# Formats our C++ (core/ ui/ app/ tests/ bench/ fuzz/ python/, the agent's tracker and the libtorch
# sample; tracked and new files) with
# clang-format 14 and the repository's .clang-format, in place. With --check it changes
# nothing: it lists the files that need formatting and fails if there are any
# (scripts/check-format.sh, run by scripts/test.sh before building).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
# The style is pinned to one major version: another clang-format formats a few constructs differently.
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null && "$c" --version | grep -q 'version 14\.'; then cf="$c"; break; fi
done
if [ -z "$cf" ]; then
  echo "scripts/format.sh: clang-format 14 is missing (scripts/install-deps.sh installs clang-format-14)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'core/*.cpp' 'core/*.h' 'ui/*.cpp' 'ui/*.h' 'app/*.cpp' 'app/*.h' \
  'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'bench/*.h' 'fuzz/*.cpp' 'fuzz/*.h' 'tools/*.cpp' 'tools/*.h' \
  'agent/*.cpp' 'agent/*.h' 'samples/*.cpp' 'samples/*.h' 'python/*.cpp' 'python/*.h' | sort -u)
existing=()
for f in "${files[@]}"; do [ -f "$f" ] && existing+=("$f"); done
if [ "$check" -eq 0 ]; then
  "$cf" -i --style=file "${existing[@]}"
  exit 0
fi
# One error per file that would change; the file names are what we list.
mapfile -t bad < <("$cf" --dry-run --Werror --ferror-limit=1 --style=file "${existing[@]}" 2>&1 |
  sed -nE 's/^([^:]+):[0-9]+:[0-9]+: error: .*/\1/p' | sort -u)
if [ "${#bad[@]}" -gt 0 ]; then
  echo "scripts/check-format.sh: ${#bad[@]} of ${#existing[@]} files need formatting (bash scripts/format.sh formats them):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "scripts/check-format.sh: ${#existing[@]} files formatted"
