#!/usr/bin/env bash
# The harness's change points against Apache Otava's (PyPI apache-otava 0.8.0, in the virtual
# environment scripts/install-deps.sh makes: $HARNESS_CACHE/otava-0.8.0) on the same series:
# tests/harness/history/otava_peer.py's 24 series, and the iteration p50 series of real histories
# of experiments/ci_regression.yaml (tests/data/history/ci_regression_series.json, from
# bench/history/errors.sh). CHANGE_POINTS_TOOL is the harness's detector as a filter.
source "$(dirname "$0")/common.sh"
: "${CHANGE_POINTS_TOOL:?set CHANGE_POINTS_TOOL to the change_points_tool binary}"
source "$(dirname "$0")/../../scripts/libtorch.sh"
python=$(otava_venv)/bin/python
[[ -x $python ]] || fail "no Apache Otava at $(otava_venv) (scripts/install-deps.sh installs it)"
here=$(cd "$(dirname "$0")/.." && pwd)
"$python" "$here/harness/history/otava_peer.py" "$CHANGE_POINTS_TOOL" \
  "$here/data/history/ci_regression_series.json" > "$SCRATCH/peer.out" ||
  fail "the harness and Otava disagree:
$(grep -v '^ok' "$SCRATCH/peer.out")"
tail -1 "$SCRATCH/peer.out"
