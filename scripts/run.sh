#!/usr/bin/env bash
# Installs what is missing, builds memscope and opens it on a bundled sample (the README's first command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target memscope
if [ $# -eq 0 ]; then
  set -- samples/llm_bs16.pickle
fi
exec build/default/app/memscope "$@"
