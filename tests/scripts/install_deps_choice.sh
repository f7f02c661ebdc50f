#!/usr/bin/env bash
# scripts/install-deps.sh refuses a package set it does not know before it touches apt: exit 2
# and one line naming the value and the three it takes (HARNESS_DEPS=quick is not quickstart).
# HARNESS_DEPS=pypi, which installs no Debian package, refuses where python3-venv is missing
# (here a dpkg-query that knows no package): exit 2, one line, neither apt nor PyPI reached.
set -uo pipefail
cd "$(dirname "$0")/../.."
err=$(HARNESS_DEPS=quick bash scripts/install-deps.sh 2>&1 >/dev/null)
code=$?
[[ $code == 2 ]] || { echo "FAIL: exit $code, not 2: $err"; exit 1; }
[[ $err == "error: HARNESS_DEPS=quick: expected all, quickstart or pypi" ]] ||
  { echo "FAIL: stderr was: $err"; exit 1; }
echo "PASS: install-deps refuses HARNESS_DEPS=quick"

shims=$(mktemp -d)
trap 'rm -rf "$shims"' EXIT
for tool in dpkg-query apt-get sudo; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/called"\nexit 1\n' "$tool" "$shims" > "$shims/$tool"
  chmod +x "$shims/$tool"
done
out=$(PATH="$shims:$PATH" HARNESS_DEPS=pypi HARNESS_LIBTORCH=pypi HARNESS_CACHE="$shims/cache" \
  bash scripts/install-deps.sh 2>"$shims/err")
code=$?
err=$(cat "$shims/err")
[[ $code == 2 ]] || { echo "FAIL: pypi without python3-venv: exit $code, not 2: $err"; exit 1; }
[[ $err == "error: HARNESS_DEPS=pypi installs no Debian package, and python3-venv is missing (scripts/install-deps.sh installs it)" ]] ||
  { echo "FAIL: pypi without python3-venv: stderr was: $err"; exit 1; }
[[ -z $out && ! -e $shims/cache ]] || { echo "FAIL: it went on: $out; $(ls "$shims")"; exit 1; }
[[ $(cat "$shims/called") == "dpkg-query -W -f=\${Status} python3-venv" ]] ||
  { echo "FAIL: it ran more than dpkg-query: $(cat "$shims/called")"; exit 1; }
echo "PASS: HARNESS_DEPS=pypi refuses without python3-venv, touching neither apt nor PyPI"
