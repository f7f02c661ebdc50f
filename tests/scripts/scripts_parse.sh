#!/usr/bin/env bash
# Every shell script the repository tracks parses (`bash -n`), and ShellCheck finds no error in it
# (its warnings are advice): a formatter for another language once rewrote two benches into
# text that no shell could run, and nothing noticed.
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
((failed == 0)) && echo "scripts: ${#scripts[@]} parse, no ShellCheck error"
exit "$failed"
