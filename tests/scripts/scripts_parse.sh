#!/usr/bin/env bash
# Every shell script the repository tracks parses (`bash -n`), ShellCheck finds no error in it (its
# warnings are advice), and every Python script compiles: a formatter for another language once
# rewrote two benches into text that no shell could run, and nothing noticed.
set -euo pipefail
cd "$(dirname "$0")/../.."
mapfile -t scripts < <(git ls-files '*.sh')
((${#scripts[@]} > 0)) || { echo "no scripts found (not a git checkout?)" >&2; exit 1; }
failed=0
for script in "${scripts[@]}"; do
  if ! bash -n "$script" 2> /tmp/scripts_parse.$$; then
    echo "does not parse: $script: $(head -1 /tmp/scripts_parse.$$)" >&2
    failed=1
  fi
done
rm -f /tmp/scripts_parse.$$
shellcheck --severity=error "${scripts[@]}" || failed=1
# Python scripts compile (parsed only: nothing is written beside them).
mapfile -t pythons < <(git ls-files '*.py')
python3 - "${pythons[@]}" <<'PY' || failed=1
import ast, sys
bad = 0
for path in sys.argv[1:]:
    try:
        ast.parse(open(path, encoding="utf-8").read(), path)
    except SyntaxError as e:
        print(f"does not compile: {path}:{e.lineno}: {e.msg}", file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
((failed == 0)) &&
  echo "scripts: ${#scripts[@]} shell scripts parse, no ShellCheck error; ${#pythons[@]} Python scripts compile"
exit "$failed"
