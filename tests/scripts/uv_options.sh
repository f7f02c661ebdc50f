#!/usr/bin/env bash
# scripts/libtorch.sh installs PyPI's packages with uv, given what pip's configuration says:
# against stand-ins for the environment's pip and uv that record how they were called, with
# `pip config list` lines as pip prints them. pip's settings become uv's options and variables,
# a PIP_* variable winning over [install] and that over [global], a wheel folder that is not
# there left out as pip leaves it; a setting uv has no counterpart for leaves the install to
# pip, as does a uv that fails; uv's cache goes after.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/libtorch.sh
work=$(mktemp -d /tmp/harness-uv-options-XXXXXX)
trap 'rm -rf "$work"' EXIT
venv=$work/torch-2.11.0
mkdir -p "$venv/bin"
fail() { echo "FAIL: $*"; exit 1; }

# pip: `config list` prints $work/config; anything else is recorded in $work/pip.calls.
cat > "$venv/bin/pip" <<SH
#!/bin/sh
if [ "\$2" = config ] || [ "\$1" = config ]; then cat "$work/config"; exit 0; fi
echo "\$@" >> "$work/pip.calls"
SH
# uv: records its cache folder (made, as uv makes it), the variables it was given and its
# arguments, one per line; exits with $work/uv.status.
cat > "$venv/bin/uv" <<SH
#!/bin/sh
mkdir -p "\$UV_CACHE_DIR" && echo "cache \$UV_CACHE_DIR" > "$work/uv.call"
echo "SSL_CERT_FILE=\${SSL_CERT_FILE-unset} UV_HTTP_TIMEOUT=\${UV_HTTP_TIMEOUT-unset}" \
  >> "$work/uv.call"
printf '%s\n' "\$@" >> "$work/uv.call"
exit \$(cat "$work/uv.status")
SH
chmod +x "$venv/bin/pip" "$venv/bin/uv"

run() {  # installs "torch==2.11.0" through libtorch_pip_install; its output in $work/out
  rm -f "$work/pip.calls" "$work/uv.call"
  env -u SSL_CERT_FILE -u UV_HTTP_TIMEOUT bash -c \
    'source scripts/libtorch.sh && libtorch_pip_install "$1" torch==2.11.0' _ "$venv" \
    > "$work/out" 2>&1 || fail "exit $?: $(cat "$work/out")"
}

# Every setting uv takes, in the sections pip reads, as pip lists them (sorted by name).
mkdir "$work/wheels"
sed "s|WORK|$work|" > "$work/config" <<'CONFIG'
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
:env:.find-links='WORK/wheels /nonexistent/wheels https://wheels.example/'
freeze.index-url='https://not-for-install.example/simple'
global.cert='/etc/global.pem'
global.extra-index-url='https://a.example/simple https://b.example/simple'
global.index-url='https://global.example/simple'
global.no-index='false'
install.index-url='https://mirror.example/simple'
install.trusted-host='mirror.example'
CONFIG
echo 0 > "$work/uv.status"
run
[[ ! -e $work/pip.calls ]] || fail "pip installed: $(cat "$work/pip.calls")"
[[ ! -e $work/uv-cache ]] || fail "uv's cache was left in $work/uv-cache"
got=$(sed -n 2,99p "$work/uv.call")
want="SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt UV_HTTP_TIMEOUT=180
pip
install
--quiet
--python
$venv/bin/python"
[[ $got == "$want"* ]] || fail "uv called as: $got"
# The options, whatever their order: each setting's once, a list's in its order.
options=$(sed -n '8,$p' "$work/uv.call" | paste -sd ' ')
for option in "--index-url https://mirror.example/simple" \
  "--extra-index-url https://a.example/simple --extra-index-url https://b.example/simple" \
  "--find-links $work/wheels --find-links https://wheels.example/" \
  "--allow-insecure-host mirror.example"; do
  [[ " $options " == *" $option "* ]] || fail "no '$option' in: $options"
done
[[ $options != *global.example* && $options != *not-for-install* && $options != *--no-index* &&
  $options != *nonexistent* ]] || fail "a setting pip's install does not use reached uv: $options"
[[ $options == *" torch==2.11.0" ]] || fail "the requirement is not last: $options"
[[ $(head -1 "$work/uv.call") == "cache $work/uv-cache" ]] ||
  fail "cache: $(head -1 "$work/uv.call")"
echo "PASS: pip's settings reach uv: $options"

# A setting uv has no counterpart for: pip installs, and says why.
echo "global.require-virtualenv='true'" >> "$work/config"
run
[[ ! -e $work/uv.call ]] || fail "uv ran beside pip's require-virtualenv"
said="install-deps: pip's setting require-virtualenv has no uv counterpart here; pip installs"
[[ $(cat "$work/out") == "$said" ]] || fail "said: $(cat "$work/out")"
[[ $(cat "$work/pip.calls") == "--disable-pip-version-check install --quiet torch==2.11.0" ]] ||
  fail "pip called as: $(cat "$work/pip.calls")"
echo "PASS: $(cat "$work/out")"

# uv fails: pip installs, and uv's cache is gone all the same.
: > "$work/config"
echo 3 > "$work/uv.status"
run
[[ -e $work/uv.call ]] || fail "uv did not run without pip settings"
[[ ! -e $work/uv-cache ]] || fail "a failed uv left its cache"
[[ $(cat "$work/out") == "install-deps: uv failed (exit 3); pip installs instead" ]] ||
  fail "said: $(cat "$work/out")"
[[ $(cat "$work/pip.calls") == "--disable-pip-version-check install --quiet torch==2.11.0" ]] ||
  fail "pip called as: $(cat "$work/pip.calls")"
echo "PASS: $(cat "$work/out")"
