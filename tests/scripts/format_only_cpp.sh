#!/usr/bin/env bash
# scripts/format.sh formats C++ and refuses anything else, leaving it as it was: a script and a
# Markdown file given to it are refused (exit 2) byte for byte unchanged; a C++ file is formatted.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '#!/usr/bin/env bash\nset -euo pipefail\n' > "$scratch/a.sh"
printf '# Install\n\nText.\n' > "$scratch/a.md"
printf 'int  f( int x ){return x;}\n' > "$scratch/a.cpp"
for file in a.sh a.md; do
  cp "$scratch/$file" "$scratch/$file.before"
  code=0
  bash "$repo/scripts/format.sh" "$scratch/$file" 2> "$scratch/err" || code=$?
  [[ $code == 2 ]] || { echo "FAIL: $file: exit $code, want 2" >&2; exit 1; }
  grep -q "not a C++ source" "$scratch/err" || { echo "FAIL: $file: $(cat "$scratch/err")" >&2; exit 1; }
  cmp -s "$scratch/$file" "$scratch/$file.before" || { echo "FAIL: $file was changed" >&2; exit 1; }
done
bash "$repo/scripts/format.sh" "$scratch/a.cpp"
[[ $(cat "$scratch/a.cpp") == "int f(int x) { return x; }" ]] ||
  { echo "FAIL: a.cpp not formatted: $(cat "$scratch/a.cpp")" >&2; exit 1; }
echo "format.sh: C++ formatted, a script and a Markdown file refused and unchanged"
