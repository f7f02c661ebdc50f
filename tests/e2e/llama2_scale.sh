#!/usr/bin/env bash
# bench/simulator/llama2_scale.sh, the paper-scale study, at 64 and 128 simulated H100s: every
# configuration simulated at each world size, Llama-2 7B's DDP replicas holding its 6.74 billion
# parameters' float32 states with AdamW (107.8 GB, more than the 80 an H100 has), 70B's
# tensor-8 slices 138 GB and its FSDP without recomputation its 80 blocks' activations; the
# fastest configuration per world the quickest of those that fit.
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.."
OUT="$SCRATCH/study" WORLDS="[64, 128]" HARNESS="$HARNESS" bash bench/simulator/llama2_scale.sh \
  > "$SCRATCH/study.out" 2>&1 || fail "the study failed: $(cat "$SCRATCH/study.out")"
"$PY" - "$SCRATCH/study/table.md" <<'PY'
import collections, sys
rows = [line.strip("|\n").split(" | ") for line in open(sys.argv[1]) if line.startswith("| 7")]
systems = collections.defaultdict(dict)
fastest = {}
for row in rows:
    cells = [c.strip() for c in row]
    if len(cells) == 8:
        systems[(cells[0], int(cells[1]))][cells[2]] = (float(cells[3]), cells[6], cells[7])
    else:
        fastest[(cells[0], int(cells[1]))] = cells[2]
expected = {"7b": {"ddp", "fsdp", "tp2", "fsdp_tp2", "tp8", "fsdp_tp8", "pp2_tp8", "pp4_tp8"},
            "70b": {"fsdp", "fsdp_ac", "tp8", "fsdp_tp8", "fsdp_tp8_ac", "pp4_tp8", "pp8_tp8"}}
for model, names in expected.items():
    for world in (64, 128):
        got = systems[(model, world)]
        assert set(got) == names, (model, world, got)
        fits = {n: ms for n, (ms, states, acts) in got.items() if "does not fit" not in acts}
        assert fastest[(model, world)] == min(fits, key=fits.get), (model, world, fastest)
    assert systems[("7b", 64)]["ddp"][1:] == ("107.8", "20.7 (does not fit)"), systems[("7b", 64)]
# 70B's tensor-8 slices: 138 GB of states; FSDP keeps 80 blocks' activations unless it recomputes.
seventy = systems[("70b", 64)]
assert seventy["tp8"][1] == "138.0" and seventy["tp8"][2].endswith("(does not fit)"), seventy
assert seventy["fsdp"][2].endswith("(does not fit)") and "fit" not in seventy["fsdp_ac"][2], seventy
PY
echo "llama2 scale: OK"
