#!/usr/bin/env bash
# scripts/hooks/commit-msg on messages written here: a subject of at most 72 characters with a
# body passes; a long subject, one joining changes with ';', or none without a body is refused.
set -euo pipefail
hook="$(cd "$(dirname "$0")/../.." && pwd)/scripts/hooks/commit-msg"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
expect() {  # want(pass|refused) message [why]
  printf '%b' "$2" > "$scratch/msg"
  code=0
  bash "$hook" "$scratch/msg" 2> "$scratch/err" || code=$?
  if [[ $1 == pass && $code != 0 ]]; then
    echo "FAIL: refused: $(cat "$scratch/err")" >&2
    exit 1
  fi
  if [[ $1 == refused ]]; then
    [[ $code == 1 ]] || { echo "FAIL: passed: $2" >&2; exit 1; }
    grep -q "$3" "$scratch/err" || { echo "FAIL: '$(cat "$scratch/err")' lacks '$3'" >&2; exit 1; }
  fi
}
long=$(printf 'x%.0s' {1..73})
expect pass 'Check a spec before any rank starts\n\nWhy it matters, and what was measured.\n'
expect pass 'One change\n\nIts reason.\n# Please enter the commit message\n'
expect pass 'Merge branch main\n'
expect refused "$long\n\nbody\n" "73 characters; at most 72"
expect refused 'Fix a; add b\n\nbody\n' "one change per commit"
expect refused 'A subject alone\n' "no body"
expect refused 'A subject\n\n\n# only comments after it\n' "no body"
expect refused '\n\nbody\n' "subject line is empty"
echo "commit-msg hook: 3 messages pass, 5 refused with their reason"
