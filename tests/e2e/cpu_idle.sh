#!/usr/bin/env bash
# run.cpu_idle (harness/machine/cpu_wake_latency.h) end to end. A program run as an external
# system reads the kernel's CPU wake-up latency target from inside the run: 0 us at the point
# that polls, the machine's own value at the point that does not, in one study; the machine's
# value again once the harness has exited, and once it has been killed outright mid-run. The
# refusals: ranks on other machines, and a machine where the request cannot be written. Without
# root (or the device) only what needs neither is checked.
source "$(dirname "$0")/common.sh"
device=/dev/cpu_dma_latency

cat > "$SCRATCH/probe.py" <<'PY'
import json, struct, sys, time
iterations, label, out, hang = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "hang"
with open("/dev/cpu_dma_latency", "rb") as device:
    latency = struct.unpack("i", device.read(4))[0]
with open(f"{out}/{label}", "w") as f:
    f.write(f"{latency}\n")
while hang:
    time.sleep(1)
for i in range(iterations):
    print(json.dumps({"iter": i, "iteration_ms": 1.0}), flush=True)
PY

write_spec() {  # $1: the probe's last argument (run | hang)
  cat > "$SCRATCH/spec.yaml" <<YAML
name: cpu_idle
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 1, iterations: 3, warmup: 0, cpu_idle: poll, stall_timeout_s: 60}
systems:
  - name: probe
    kind: external
    command: ["python3", "$SCRATCH/probe.py", "{iterations}", "{point.run.cpu_idle}", "$SCRATCH", "$1"]
YAML
}
refused() {  # want args...: refused, and nothing written
  expect_refused "$SCRATCH/spec.yaml" "$@"
  [[ ! -e "$SCRATCH/results" ]] || fail "a refused run wrote results"
}
read_latency() { "$PY" -c 'import struct,sys; print(struct.unpack("i", open(sys.argv[1], "rb").read(4))[0])' "$device"; }

write_spec run
refused "run.cpu_idle: poll holds the wake-up latency of this machine's CPUs, and mpirun starts ranks on other machines" \
  --launcher mpirun --hosts a:1,b:1
if [[ ! -w $device ]]; then
  refused "run.cpu_idle: poll needs write access to $device: "
  echo "SKIP: $device is not writable here: the refusal above was checked, not the hold"
  exit 77
fi
before=$(read_latency)
[[ $before != 0 ]] || { echo "SKIP: another process holds the CPUs' latency at 0 already"; exit 77; }

# One study, two points: the hold is per point, and the target is back after it.
"$HARNESS" run "$SCRATCH/spec.yaml" --set 'sweep.run.cpu_idle=[os, poll]' >"$SCRATCH/out" 2>&1 ||
  fail "run: $(cat "$SCRATCH/out")"
[[ $(cat "$SCRATCH/poll") == 0 ]] || fail "the polling point saw $(cat "$SCRATCH/poll") us, not 0"
[[ $(cat "$SCRATCH/os") == "$before" ]] || fail "the OS point saw $(cat "$SCRATCH/os") us, not $before"
[[ $(read_latency) == "$before" ]] || fail "after the study the target is $(read_latency) us, not $before"
# env.json says what the idle cores were: the machine's driver, and the policy per point.
"$PY" - "$(ls -d "$SCRATCH"/results/cpu_idle/*/)" <<'PY'
import json, os, sys
idle = json.load(open(os.path.join(sys.argv[1], "env.json")))["cpu_idle"]
assert idle["policy"] == "per point", idle
path = "/sys/devices/system/cpu/cpuidle/current_driver"
driver = open(path).read().strip() if os.path.exists(path) else None
assert idle["driver"] == driver, (idle, driver)
PY
[[ $? == 0 ]] || fail "env.json's cpu_idle"

# The harness killed outright while the program runs: the request goes with the harness.
rm -f "$SCRATCH/poll"
write_spec hang
"$HARNESS" run "$SCRATCH/spec.yaml" --set output="$SCRATCH/killed" >"$SCRATCH/killed.out" 2>&1 &
harness=$!
for _ in $(seq 300); do [[ -s "$SCRATCH/poll" ]] && break; sleep 0.1; done
[[ $(cat "$SCRATCH/poll" 2>/dev/null) == 0 ]] || fail "the hung program saw no hold: $(cat "$SCRATCH/killed.out")"
kill -9 "$harness"
wait "$harness" 2>/dev/null || true
for _ in $(seq 100); do pgrep -f "$SCRATCH/probe.py" >/dev/null || break; sleep 0.1; done
pgrep -f "$SCRATCH/probe.py" >/dev/null && fail "the program outlived its harness"
[[ $(read_latency) == "$before" ]] || fail "after the harness was killed the target is $(read_latency) us, not $before"
echo "PASS: cpu_idle (target $before us outside the polling runs)"
