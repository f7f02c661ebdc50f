#!/usr/bin/env bash
# Formats the C++ sources, and nothing else: clang-format (.clang-format) on the tracked *.cpp,
# *.h, *.cu and *.cuh files, or on the C++ files among the paths given. clang-format reads any
# text as C++ and has rewritten scripts and Markdown here into text that no longer parsed, so
# other files given are refused, not formatted. --check formats nothing and exits 1 when a
# file would change (the house_rules test checks the same).
#
# Usage: scripts/format.sh [--check] [PATH...]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-i)
if [[ ${1:-} == --check ]]; then
  mode=(--dry-run -Werror)
  shift
fi
is_cpp() { [[ $1 =~ \.(cpp|h|cu|cuh)$ ]]; }
files=()
if (($# == 0)); then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
else
  for path in "$@"; do
    if ! is_cpp "$path"; then
      echo "error: $path: not a C++ source; scripts/format.sh formats C++ only" >&2
      exit 2
    fi
    files+=("$path")
  done
fi
((${#files[@]} > 0)) || exit 0
clang-format "${mode[@]}" "${files[@]}"
