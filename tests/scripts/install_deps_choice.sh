#!/usr/bin/env bash
# scripts/install-deps.sh refuses a package set it does not know before it touches apt: exit 2
# and one line naming the value and the three it takes (HARNESS_DEPS=quick is not quickstart).
set -uo pipefail
cd "$(dirname "$0")/../.."
err=$(HARNESS_DEPS=quick bash scripts/install-deps.sh 2>&1 >/dev/null)
code=$?
[[ $code == 2 ]] || { echo "FAIL: exit $code, not 2: $err"; exit 1; }
[[ $err == "error: HARNESS_DEPS=quick: expected all, build or quickstart" ]] ||
  { echo "FAIL: stderr was: $err"; exit 1; }
echo "PASS: install-deps refuses HARNESS_DEPS=quick"
