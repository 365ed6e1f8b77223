#!/usr/bin/env bash
# Fails, listing them, when C++ files need formatting (clang-format 14, .clang-format);
# scripts/format.sh formats them. Run by scripts/test.sh before building.
exec bash "$(dirname "$0")/format.sh" --check "$@"
