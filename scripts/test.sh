#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and every test run (ctest prints its summary).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
ctest --test-dir build --output-on-failure -j 2 --timeout 900
