#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and the quickstart study run.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
./build/harness run experiments/quickstart.yaml
