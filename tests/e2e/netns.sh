#!/usr/bin/env bash
# Two "hosts" on one machine: network namespaces joined by a veth pair, each with its own
# address. Rank 0 runs in one, rank 1 in the other, with torchrun's variables; they rendezvous
# across the link (Gloo listens on each namespace's own address, found from the route to
# MASTER_ADDR), and rank 1's samples reach rank 0's folder through the store (each rank has
# its own folder: no shared file system). The namespaces are removed afterwards. Skips (exit
# 77) where namespaces cannot be created (not root, no iproute2, no CAP_SYS_ADMIN).
source "$(dirname "$0")/common.sh"

skip() { echo "SKIP netns: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "needs iproute2 (ip)"

tag=$$
ns0=harness-a-$tag ns1=harness-b-$tag
net=10.$((200 + tag % 50)).$((tag % 250)).
addr0=${net}1 addr1=${net}2
cleanup() {
  ip netns del "$ns0" 2>/dev/null || true
  ip netns del "$ns1" 2>/dev/null || true
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
ip netns add "$ns0" 2>/dev/null || skip "cannot create a network namespace here"
ip netns add "$ns1" || skip "cannot create a second network namespace"
ip -n "$ns0" link add veth0 type veth peer name veth1 netns "$ns1" ||
  skip "cannot create a veth pair"
ip -n "$ns0" addr add "$addr0/24" dev veth0
ip -n "$ns1" addr add "$addr1/24" dev veth1
for ns in "$ns0" "$ns1"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns0" link set veth0 up
ip -n "$ns1" link set veth1 up

# The worker config of a tiny study, as the harness would pass it inline.
cat > "$SCRATCH/spec.yaml" <<YAML
name: netns
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 3, warmup: 1}
systems: [overlap]
YAML
"$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun --print-launch >"$SCRATCH/plan"
"$PY" - "$SCRATCH/plan" "$SCRATCH/config.json" <<'PY'
import shlex, sys
line = next(l for l in open(sys.argv[1]) if "--config-json" in l)
words = shlex.split(line)
open(sys.argv[2], "w").write(words[words.index("--config-json") + 1])
PY

port=29517
pids=()
for r in 0 1; do
  ns=$ns0; [[ $r == 1 ]] && ns=$ns1
  ip netns exec "$ns" env RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR="$addr0" MASTER_PORT=$port \
    timeout 120 "$HARNESS_RANK" worker --config "$SCRATCH/config.json" --out "$SCRATCH/host$r" \
    >"$SCRATCH/rank$r.out" 2>"$SCRATCH/rank$r.err" &
  pids+=($!)
done
for r in 0 1; do
  wait "${pids[$r]}" || fail "rank $r failed: $(cat "$SCRATCH/rank$r.err")"
done
expect_contains "$(cat "$SCRATCH/rank0.out")" "rank identity: rank=0 world=2 local_rank=0"
expect_contains "$(cat "$SCRATCH/rank0.out")" "master=$addr0:$port gloo=$addr0"
expect_contains "$(cat "$SCRATCH/rank1.out")" "master=$addr0:$port gloo=$addr1"
"$PY" - "$SCRATCH" <<'PY'
import csv, os, sys
d = sys.argv[1]
for r in (0, 1):
    rows = list(csv.reader(open(os.path.join(d, "host0", f"rank{r}.csv"))))
    assert rows[0][0] == "iteration" and len(rows) == 4, rows
assert not os.path.exists(os.path.join(d, "host1", "rank0.csv"))
PY

cleanup_check=$(ip netns list | grep -c "harness-[ab]-$tag" || true)
ip netns del "$ns0"; ip netns del "$ns1"
[[ $(ip netns list | grep -c "harness-[ab]-$tag" || true) == 0 ]] || fail "namespaces left behind"
[[ $cleanup_check == 2 ]] || fail "expected 2 namespaces while running, saw $cleanup_check"
echo "PASS netns"
