#!/usr/bin/env bash
# An emulated cluster's links measured against what they were configured with (issue 21):
# `harness profile comm --machines 2 --link-rate R` runs its two ranks in two network namespaces
# joined through a shaped link and measures what the link delivers -- send/recv and all-reduce
# near R for two rates 20x apart, the configured link in comm.json, a configured delay, no
# namespace left -- and a study on 2 emulated machines runs slower on the slower link, its probe's
# figures in env.json. Rates measured against the configured ones: run alone (tests/CMakeLists.txt).
# What else an emulated cluster does is emulated_cluster.sh. Without root or the qdiscs it says
# so in one line (exit 2) and this test skips (77).
source "$(dirname "$0")/common.sh"
skip_without_emulated_machines 100mbit
# The probe's one size and no ping-pong: no bandwidth can be fitted, which is said, not shown as
# 0 (-100%).
expect_contains "$(cat "$SCRATCH/machines-probe.out")" "p2p not fitted (needs the op at two sizes or more)"
expect_contains "$(cat "$SCRATCH/machines-probe.out")" "all-reduce busbw not fitted (needs the op at two sizes or more)"
# Each rate at a size of 130 ms or more of it, so that the rate, not a message's fixed cost
# (tens of microseconds), decides; three iterations after one (the ping-pong times four
# transfers in each at 2 MiB, two from 4 MiB), their median setting aside one that something else
# slowed. (At twice these sizes the ratios were the same: 0.95-0.96 ping-pong, 0.88-0.96
# all-reduce; with eight transfers in each iteration instead of two or four, each rate's
# ping-pong moved by about 4% and a rate's run took half again as long.)
# Two rates: a third between them, 500 Mbit/s at 8M, measured nothing the two do not, and this
# test runs alone (its 4.3 s were the whole suite's).
for rate_size in 100mbit:2M 2gbit:32M; do
  rate=${rate_size%%:*} size=${rate_size##*:}
  "$HARNESS" profile comm --world 2 --machines 2 --link-rate "$rate" --ops allreduce,pingpong \
    --sizes "$size" --iterations 3 --warmup 1 --out "$SCRATCH/$rate" > "$SCRATCH/log" 2>&1 ||
    fail "$rate: $(tail -3 "$SCRATCH/log")"
  expect_contains "$(cat "$SCRATCH/log")" "emulated cluster: 2 machine(s)"
  expect_contains "$(cat "$SCRATCH/log")" "# inter-machine link: configured vs measured"
  "$PY" - "$SCRATCH/$rate/comm.json" "$rate" <<'PY'
import json, sys
comm, rate = json.load(open(sys.argv[1])), sys.argv[2]
configured = {"100mbit": 100e6, "2gbit": 2e9}[rate]
emulated = comm["emulated_cluster"]
assert emulated["machines"] == 2 and emulated["ranks_per_machine"] == 1, emulated
assert emulated["inter_machine_configured"]["rate_bits_per_s"] == configured, emulated
# The token bucket the link was shaped with: 1 ms of the rate, at least 8 KiB.
assert emulated["inter_machine_configured"]["token_bucket_bytes"] == max(8192, int(configured / 8000)), emulated
# Never faster than the rate (within 10% above: the bucket's burst), and not much slower: send/
# recv one way between the machines (ping-pong) within 10% below, the all-reduce's bus
# bandwidth within 30% below. tbf counts Ethernet frames: TCP's payload is at most 1448 of each
# 1514 bytes (95.6%), and Gloo's all-reduce adds its own messages and its reduction, on the
# same 2 cores as both machines: at 500 Mbit/s Debian's 1.13 measured -10.7%, torch 2.11's
# build -15.2% and -21.1% in two CI runs (-5% at 2 Gbit/s, -8% at 100 Mbit/s).
for op, below in (("pingpong", 0.10), ("allreduce", 0.30)):
    row = next(r for r in comm["rows"] if r["op"] == op)
    measured = row["busbw_gbps"] * 8e9
    assert 1 - below <= measured / configured <= 1.10, (rate, op, measured, configured)
    print(f"{rate}: {op} busbw {measured / 1e6:.1f} Mbit/s ({100 * (measured / configured - 1):+.1f}%) at {row['bytes']} B")
PY
done
# A configured 1 ms delay: the one-way time of a ping-pong's smallest message within 20%
# (needs the kernel's netem; a kernel without it refuses the delay in one line).
set +e
"$HARNESS" profile comm --world 2 --machines 2 --link-rate 1gbit --link-delay 1ms --ops pingpong \
  --sizes 8 --iterations 10 --warmup 2 --out "$SCRATCH/delay" > "$SCRATCH/delay.log" 2>&1
code=$?
set -e
if [[ $code == 2 ]]; then
  expect_contains "$(cat "$SCRATCH/delay.log")" "netem"
  echo "SKIP (latency part): $(cat "$SCRATCH/delay.log")"
else
  [[ $code == 0 ]] || fail "delay run: exit $code: $(tail -3 "$SCRATCH/delay.log")"
  "$PY" - "$SCRATCH/delay/comm.json" <<'PY'
import json, sys
latency = json.load(open(sys.argv[1]))["emulated_cluster"]["inter_machine_measured"]["one_way_latency_us"]
assert abs(latency / 1000 - 1) <= 0.20, latency
print(f"one-way latency {latency:.0f} us with a configured 1 ms delay")
PY
fi
# The last run's namespaces ("harness-<its pid>-sw", -m0, -m1) are gone.
prefix=$(sed -n 's/^emulated cluster: .* joined through \(harness-[0-9]*-\)sw$/\1/p' "$SCRATCH/log")
[[ -n "$prefix" ]] || fail "no plan printed: $(head -3 "$SCRATCH/log")"
if ip netns list | grep -q "^$prefix"; then fail "namespaces left: $(ip netns list)"; fi
# A train study on 2 emulated machines, the inter-machine bandwidth swept: DDP's iteration
# (an MLP: all-reduce dominates) takes longer on the slower link; --dry-run prints the plan.
# Beside it an external system: each rank in its machine's namespace, meeting at machine 0's
# address, GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME naming the machine's interface; its 1 MiB
# transfers per iteration take longer on the slower link too.
cat > "$SCRATCH/external_link.py" <<'PY'
import json, os, socket, sys, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
iterations, out_dir = int(sys.argv[1]), sys.argv[2]
address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
payload = b"x" * (1 << 20)
if rank == 0:
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(address); server.listen(); peer, peer_address = server.accept()
else:
    deadline = time.time() + 30
    while True:
        try:
            peer = socket.create_connection(address); break
        except OSError:
            if time.time() > deadline: raise
            time.sleep(0.05)
    peer_address = None
seen = {k: os.environ.get(k) for k in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "LOCAL_RANK",
                                       "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR")}
seen["peer_address"] = peer_address[0] if peer_address else None
json.dump(seen, open(os.path.join(out_dir, f"seen{rank}.json"), "w"))
for i in range(iterations):
    start = time.monotonic()
    if rank == 0:
        got = 0
        while got < len(payload): got += len(peer.recv(1 << 16))
        peer.sendall(b"k")
    else:
        peer.sendall(payload); peer.recv(1)
    print(json.dumps({"iter": i, "iteration_ms": (time.monotonic() - start) * 1e3}), flush=True)
PY
cat > "$SCRATCH/spec.yaml" <<YAML
name: emulated
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 6, warmup: 2, trace: false}
cluster: {machines: 2, network: {inter_machine: {bandwidth: 1gbit}}}
systems:
  - overlap
  - name: sockets
    kind: external
    command: [$PY, $SCRATCH/external_link.py, "{iterations}", "{output_dir}"]
sweep:
  cluster.network.inter_machine.bandwidth: [100mbit, 2gbit]
YAML
dry=$("$HARNESS" run "$SCRATCH/spec.yaml" --dry-run)
expect_contains "$dry" "emulated cluster: 2 machine(s) joined through harness-"
expect_contains "$dry" "tbf rate 100000kbit"
[[ ! -e "$SCRATCH/results" ]] || fail "--dry-run wrote results"
"$HARNESS" run "$SCRATCH/spec.yaml" > "$SCRATCH/log" 2>&1 || fail "emulated run: $(tail -5 "$SCRATCH/log")"
"$PY" - "$(ls -d "$SCRATCH"/results/emulated/*/)" <<'PY'
import glob, json, os, sys
study = sys.argv[1]
summary = json.load(open(study + "/summary.json"))
def p50(system, rate):
    point = next(p for p in summary["points"]
                 if p["label"] == f"cluster.network.inter_machine.bandwidth={rate}")
    return next(s for s in point["systems"] if s["name"] == system)["phases"]["iteration"]["p50"]
slow, fast = p50("overlap", "100mbit"), p50("overlap", "2gbit")
# The MLP's 340 KB of gradients: ~27 ms a pass at 100 Mbit/s, ~1.4 ms at 2 Gbit/s.
assert slow > 3 * fast, (slow, fast)
print(f"MLP DDP iteration p50: {slow:.1f} ms at 100 Mbit/s, {fast:.1f} ms at 2 Gbit/s")
for rank in (0, 1):
    seen = json.load(open(glob.glob(f"{study}/raw/p000/sockets/rep0/seen{rank}.json")[0]))
    assert seen["GLOO_SOCKET_IFNAME"] == "eth0" and seen["NCCL_SOCKET_IFNAME"] == "eth0", seen
    assert seen["LOCAL_RANK"] == "0" and seen["LOCAL_WORLD_SIZE"] == "1", seen
    assert seen["GROUP_RANK"] == str(rank) and seen["MASTER_ADDR"] == "10.99.0.1", seen
    if rank == 0:
        assert seen["peer_address"] == "10.99.0.2", seen  # rank 1 came from machine 1
slow, fast = p50("sockets", "100mbit"), p50("sockets", "2gbit")
# 1 MiB: ~84 ms at 100 Mbit/s, ~4 ms at 2 Gbit/s.
assert slow > 5 * fast and 70 < slow < 110, (slow, fast)
print(f"external 1 MiB transfer p50: {slow:.1f} ms at 100 Mbit/s, {fast:.1f} ms at 2 Gbit/s")
env = json.load(open(study + "/env.json"))
links = env["emulated_links"]
assert [l["inter_machine_configured"]["rate_bits_per_s"] for l in links] == [1e8, 2e9], links
# The probe before the points measured each link: one way (ping-pong) within 15% of its rate;
# the all-reduce never above it (the link is shaped) and, as it leans on the CPU that other
# tests share here, at least 60% of it at 2 Gbit/s; at 100 Mbit/s at least 80% (it is measured
# up to 4 MiB, which crosses a slow shaped link at 0.89-0.91 of its rate here).
# The probe times its all-reduce alone (plain c10d's beside it is `harness profile comm`'s check,
# not the link's figure), each size after two untimed ones.
probes = sorted(glob.glob(study + "/links/link*/allreduce/comm-raw.json"))
assert len(probes) == 2, probes
for raw in map(json.load, map(open, probes)):
    assert raw["reference"] == [] and raw["warmup"] == 2 and raw["iterations"] == 3, raw
for link in links:
    configured = link["inter_machine_configured"]["rate_bits_per_s"]
    measured = link["inter_machine_measured"]
    assert abs(measured["p2p_bits_per_s"] / configured - 1) <= 0.15, link
    floor = 0.80 if configured <= 1e8 else 0.60
    assert floor <= measured["allreduce_bus_bits_per_s"] / configured <= 1.15, link
    # A message after the link idled (its token bucket full, the `burst` ping-pong): tens to
    # hundreds of microseconds one way here; below the bucket's size it crosses faster than the
    # link's measured rate (a bucket that was not full would give the rate itself), where the
    # host's path was resolved at all (a fit no faster is reported as not resolved, 0).
    assert 0 < measured["burst_latency_us"] < 2000, link
    burst_rate = measured["burst_bits_per_s"]
    assert burst_rate == 0 or burst_rate > measured["p2p_bits_per_s"], link
    # What the burst's send call held its thread for, by size: the burst's three sizes and twice
    # and eight times the bucket (their own phase, send_call/), each call tens of microseconds
    # to a few milliseconds; the call returns before its message has crossed, so beyond the
    # bucket it is shorter than the one-way time, which the bucket's rate bounds from below.
    bucket = link["inter_machine_configured"]["token_bucket_bytes"]
    calls = measured["send_call_us"]
    sizes = [size for size, _ in calls]
    assert sizes == sorted(sizes) and len(sizes) == 5, calls
    assert sizes[3:] == [bucket * 2 // 4 * 4, bucket * 8 // 4 * 4], (calls, bucket)
    assert all(0 < us < 5000 for _, us in calls), calls
    folder = os.path.join(study, os.path.dirname(link["topology"]))
    beyond = json.load(open(os.path.join(folder, "send_call", "comm-raw.json")))["entries"]
    assert [e["bytes"] for e in beyond] == sizes[3:], beyond
    one_ways_ms = [sorted(e["times_ms"])[1] for e in beyond]  # the median of the three
    for entry, one_way_ms, (_, call_us) in zip(beyond, one_ways_ms, calls[3:]):
        floor_ms = (entry["bytes"] - bucket) * 8 / configured * 1e3
        assert one_way_ms >= 0.9 * floor_ms and call_us / 1e3 < one_way_ms, (entry, floor_ms, call_us)
    # What those two took beyond the burst model of them (its latency and path for the bucket,
    # the rest at the measured rate), their median: recomputed here from the same files.
    bucket_us = bucket / (measured["burst_bits_per_s"] / 8) * 1e6 if measured["burst_bits_per_s"] else 0
    past = [ms * 1e3 - (measured["burst_latency_us"] + bucket_us +
            (e["bytes"] - bucket) / (measured["p2p_bits_per_s"] / 8) * 1e6)
            for e, ms in zip(beyond, one_ways_ms)]
    assert abs(measured["past_bucket_latency_us"] - sum(past) / 2) < 1e-6 * max(1, abs(sum(past))), (measured, past)
    assert -2000 < measured["past_bucket_latency_us"] < 2000, measured
PY

echo "ok"
