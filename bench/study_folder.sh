# shellcheck shell=bash
# Sourced by the study benches: `study_folder SPEC` sets STUDY to the results folder to read --
# STUDY as the caller gave it, or else the one a fresh `harness run SPEC` (with --quick when
# QUICK is set) just wrote. Run from the repository root; HARNESS defaults to build/harness.
study_folder() {
  local spec=$1
  HARNESS=${HARNESS:-build/harness}
  if [[ -z "${STUDY:-}" ]]; then
    "$HARNESS" run "$spec" ${QUICK:+--quick} > /dev/null
    STUDY=$(ls -d "results/$(basename "$spec" .yaml)"/*/ | tail -1)
  fi
}
