#!/usr/bin/env bash
# The simulator against emulated clusters (issue 21, study c; issue 39): RUNS real runs of a
# study on emulated machines (root), each run's p50 one sample: the iterations of one run are
# not independent samples, so one run's p50 is no reference. Per bandwidth level and run, a
# simulation of the same systems with the topology, the one-way latency and the share of a
# core the all-reduce kept busy, measured on that run's machines before its iterations (its
# links/<n>/ and env.json `emulated_links`): nothing of the runs' timings goes into a
# simulation. The layer profiles (and the gradient reducer's copy) are measured right after
# each run, for that run's simulations, each as its system runs the layers: at small batches a
# layer's fixed cost, not its FLOPs, decides its time, so one profile scaled by batch would miss
# it (one at 8 samples scaled to 16 made DAPPLE's stage 1
# forward 53% and backward 23% slower than they run). Prints, per level and system, the
# median of the runs' p50s, their range and a distribution-free interval of the median (order
# statistics; its coverage is printed, 93.8% at most with 5 runs), the median of the runs'
# simulated p50s and, last, the error of the simulation against the median of the runs.
#
# SHAPE picks the study:
#   2x1 (default): experiments/emulated_simulator_levels.yaml, DDP overlap, DAPPLE 2 stages and
#       ZeRO stages 1-3 (priced from DDP's profile) on 2 machines at four bandwidths, simulated by experiments/simulate_emulated_levels.yaml.
#       DDP's profile at the rank's batch (32) with two copies in lockstep (both ranks compute at
#       once on this host's cores), the pipeline's at its micro-batch (16: the global batch of
#       2 x 32 in 4 micro-batches) with both stages timing their layers at once, on the wall clock.
#   4x1: experiments/emulated_simulator_levels_4.yaml, DDP overlap, DAPPLE 4 stages and DAPPLE 2
#       stages x 2 replicas on 4 machines at three bandwidths, simulated by
#       experiments/simulate_emulated_levels_4.yaml: the four machines are one host's cores (2 here),
#       which the simulation shares itself (cluster.machines_per_host), so the profiles are taken
#       on the CPU clock with as many processes as the runs have ranks.
#   tensor: experiments/emulated_tensor_levels.yaml, DDP and tensor parallelism (TP 2 x DDP 2,
#       with and without sequence parallelism) on 2 machines of 2 ranks, the tensor groups inside
#       a machine, at three bandwidths, simulated by a spec the script writes into OUT (the
#       slice's profile has no committed stand-in). Its inputs, after each run: DDP's profile and
#       the slice's (`--tensor 2`, a group's batch), 4 copies in lockstep on the CPU clock (the
#       simulation shares the host's cores), and the Gloo collectives timed on loopback right
#       after compute (`harness profile comm --after-compute 5`, as a split block meets them),
#       one group's while the other group profiles its own: the tensor groups' collectives stay
#       inside a machine, which is this host's loopback, and the machines share its cores.
#   planner: experiments/emulated_planner_levels.yaml, VGG-19 (an eighth of its width) on 2
#       machines of 2 ranks at four bandwidths, DDP and the plan `plan: auto` chose from each
#       level's measured link, simulated by experiments/simulate_emulated_planner_levels.yaml
#       with each run's own inputs: the profile its planner measured (one process, the wall
#       clock) and the plan it chose at that level; the simulation shares the host's cores.
#
# Usage: [SHAPE=2x1|4x1|tensor|planner] [RUNS=5] [REAL="<earlier study folders>"] [PROFILES=<earlier OUT>]
#        [LEVELS=300mbit,1gbit] [QUICK=1] [BURST=1] [BURST_COST=0] [PAST_BUCKET=0] [SEND_CALL=0] [COMPUTE=runs] [AFTER_IDLE=0] [COPIES=0] [HARNESS=build/harness] bash bench/emulated/validate_levels.sh
#        (2x1: about 2.3 min a run here; 4x1: about 2.5 min)
# LEVELS runs only those of the study's bandwidths (its sweep's values, comma-separated).
# REAL and PROFILES together simulate an earlier validation's runs again with its own
# profiles: a change of the model checked on the same inputs, in seconds. Every point is also
# simulated with the token bucket its link was shaped with (simulate.cluster.inter_burst_bytes:
# after an idle moment a 64 KiB activation crosses 300 Mbit/s in ~1 ms, not its 1.75 ms of wire
# time), printed beside; BURST=1 makes that the last column. A burst costs what the link probe
# measured for one (its `burst` ping-pong, env.json `inter_machine_measured.burst_latency_us`
# and `burst_bits_per_s`: a message after the link idled, its latency and the host's own path;
# simulate.cluster.inter_burst_latency_us and _bandwidth); BURST_COST=0 makes bursts free but
# for the link's latency (the model before it), and older runs have none.
# A transfer longer than its bucket also takes what the probe's messages at twice and eight
# times the bucket took beyond that model (env.json `past_bucket_latency_us`,
# simulate.cluster.inter_past_bucket_latency_us; older runs have none); PAST_BUCKET=0 leaves it out.
# A pipeline stage's send call that writes its own message holds the stage for what the probe's
# burst ping-pong measured its calls at, by size (env.json `send_call_us`,
# simulate.cluster.inter_send_call_us; older runs have none); SEND_CALL=0 leaves
# the calls free.
# COMPUTE=runs (a diagnostic, not a prediction): every pipeline stage's layers scaled so that
# they sum to what the run's own ranks computed at that point, per micro-batch (the median
# iteration of pipeline_rank<r>.json): the schedule and the links checked alone, the profile's
# error taken out (DDP keeps its profile: its backward_ms includes the all-reduce's wait).
# 4x1 and planner: only for runs on a host with two cores per rank (a rank's and its Gloo
# thread's; env.json `logical_cores`): where the simulation shares a host's cores, it stretches
# compute by the sharing itself, and the runs' wall-clock stage times already include the wait
# for a core.
# The layer profiles carry each stage's forward and backward after idle gaps (`harness profile
# layers --after-idle-ms`), from which the simulation prices a stage's compute after it waited
# for its input (simulator/README.md, "Compute after a wait"); AFTER_IDLE=0 leaves that out.
# SIM_SPEC=<file> simulates with another variant of the shape's simulation spec (its name the
# file's name). The gradient reducer's copies (a bucket copied in and out around its
# all-reduce) are priced from `harness profile comm --world 1 --ops copy`, measured after each
# run (<OUT>/profiles/<run>/copy); COPIES=0 leaves them out.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${COMPUTE:-}" == runs && "${SHAPE:-2x1}" != 2x1 && -z "${REAL:-}" && $(nproc) -lt 8 ]]; then
  echo "error: COMPUTE=runs: SHAPE=${SHAPE} needs 8 cores for its 4 ranks, this host has $(nproc) (the runs' wall-clock stage times on shared cores include the wait for a core, which the simulation adds again)" >&2
  exit 2
fi
if [[ ! "${RUNS:-5}" =~ ^[1-9][0-9]*$ ]]; then
  echo "error: RUNS=${RUNS}: expected a whole number of runs, 1 or more" >&2
  exit 2
fi
# Four emulated machines on fewer than a core per rank and its Gloo thread: the runs measure the
# host as well (a rank preempted inside a Gloo call loses the scheduler's tick to its peers'
# spinning threads; experiments/README.md, "Simulated clusters"), which no cluster has and the
# simulation does not model. Said before the runs, not refused: the other cells still check.
if [[ "${SHAPE:-2x1}" == 4x1 && -z "${REAL:-}" && $(nproc) -lt 8 ]]; then
  echo "note: SHAPE=4x1 runs 4 ranks on this host's $(nproc) cores; its 4-stage pipeline at 300 Mbit/s and 1 Gbit/s measures the host's scheduler too (simulated 14-41% below such runs on 2 cores, 3-12% on 16): judge that shape on a host with 8 cores or more" >&2
fi
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/emulated-validate-XXXXXX)}
mkdir -p "$OUT"
start=$(date +%s)
# Per shape: the real study, its simulation, and the profiles, each as
# "<folder> <batch> <systems it prices, comma-separated> <options of harness profile layers>".
case "${SHAPE:-2x1}" in
  2x1)
    STUDY=emulated_simulator_levels SIMULATION=simulate_emulated_levels
    MODEL=(--model mlp --width 1024 --input-shape 64 --repetitions 20 --warmup 2)
    PROFILE_SET=("profile-b32-co2 32 overlap,zero1,zero2,zero3 --co-located 2"
                 "profile-b16-stages 16 dapple_2 --stages 0-2,3-5") ;;
  4x1)
    STUDY=emulated_simulator_levels_4 SIMULATION=simulate_emulated_levels_4
    MODEL=(--model mlp --depth 4 --width 1024 --input-shape 64 --repetitions 20 --warmup 2
           --clock cpu)
    # The global batch of 4 x 32 in 4 micro-batches: 32 samples a micro-batch, 16 for each of a
    # stage's 2 replicas.
    PROFILE_SET=("profile-b32-co4 32 overlap --co-located 4"
                 "profile-b32-stages4 32 dapple_4 --stages 0-2,3-4,5-6,7-9"
                 "profile-b16-stages2x2 16 dapple_2x2 --stages 0-4,5-9 --co-located 2") ;;
  tensor)
    STUDY=emulated_tensor_levels SIMULATION=simulate_emulated_tensor_levels
    MODEL=(--model llama --depth 4 --width 256 --decoder 4,4,1000 --input-shape 64
           --optimizer adamw --repetitions 5 --warmup 1 --after-idle-ms none --co-located 4
           --clock cpu)
    PROFILE_SET=("profile-b2-co4 2 ddp" "profile-tensor2-b4-co4 4 tp,tp_sp --tensor 2")
    SIM_SPEC=${SIM_SPEC:-$OUT/$SIMULATION.yaml}
    cat > "$OUT/$SIMULATION.yaml" <<'YAML'
# Written by bench/emulated/validate_levels.sh (SHAPE=tensor): the simulation of
# experiments/emulated_tensor_levels.yaml at one level; the script sets the profile, the
# measured link and the collectives' profile of each run.
kind: simulate
name: simulate_emulated_tensor_levels
simulate:
  model: {profile: none, pbs: 2, batch_size: 2}
  cluster:
    topology: profiles/gloo-2ranks-cpu/topology.yaml
    gpus_per_machine: 2
    cpu_cores: 2
    machines_per_host: 2
  run: {world_size: 4, iterations: 10}
  # The systems each profile prices (TENSOR_SYSTEMS in the script).
  systems: [{name: ddp, mode: overlap}]
  baseline: ddp
YAML
    ;;
  planner)
    # Each run's own plan per level (<run>/plans/); the profiles, of the run's own model at the
    # batches it computes (DDP's and a pipeline replica's share of a micro-batch).
    STUDY=emulated_planner_levels SIMULATION=simulate_emulated_planner_levels
    PROFILE_SET=() ;;
  *) echo "error: SHAPE=$SHAPE: expected 2x1, 4x1, tensor or planner" >&2; exit 2 ;;
esac
# One script measures what a run is simulated with (--profile-run <run>, right after the run)
# and, last, simulates every run and prints the table. Profiles taken once after all the runs
# carry whatever speed phase the VM is in then, which the runs may not have shared.
SCRIPT=$(mktemp /tmp/validate-levels-XXXXXX.py)
trap 'rm -f "$SCRIPT"' EXIT
cat > "$SCRIPT" <<'PY'
import functools, glob, json, math, os, re, shutil, statistics, subprocess, sys
out, harness, burst, sim_spec, shape, model_options, profile_set = sys.argv[1:8]
burst, reals = burst == "1", sys.argv[8:]

# The gradient reducer's passes over its buckets, as one rank alone copies a buffer (the
# simulation shares the host's cores itself).
COPY_COMMAND = ["profile", "comm", "--world", "1", "--ops", "copy", "--sizes", "1M,4M,16M",
                "--iterations", "10", "--warmup", "2"]

# SHAPE=tensor: the Gloo collectives on this host's loopback, each timed right after compute on
# every rank, as a split block meets them (the tensor groups stay inside a machine), by one
# group while the other profiles its own: the two machines are this host's cores, and the runs'
# groups meet their collectives at once.
COLLECTIVES_COMMAND = ["profile", "comm", "--world", "2", "--ops",
                       "allreduce,sendrecv,copy,allgather,reducescatter", "--sizes", "64K:16M:x4",
                       "--iterations", "8", "--warmup", "2", "--after-compute", "5"]

# SHAPE=tensor: the study's systems as the simulation writes them; each profile prices its own
# (a slice's profile the tensor systems, the whole model's DDP).
TENSOR_SYSTEMS = {"ddp": "{name: ddp, mode: overlap}",
                  "tp": "{name: tp, kind: tensor_parallel, tensor: 2}",
                  "tp_sp": "{name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}"}

def measure(path, arguments, what):
    """`harness <arguments> --out <path>`, its output in <path>.log; exits on failure."""
    with open(path + ".log", "w") as log:
        if subprocess.run([harness, *arguments, "--out", path], stdout=log,
                          stderr=subprocess.STDOUT).returncode:
            sys.exit(f"error: measuring {what} failed; see {path}.log")

def measure_beside(path, arguments, what, others):
    """measure(), with `others` more processes of the same measurement running beside it (their
    output in <path>_beside<k>, not used)."""
    beside = []
    for k in range(1, others + 1):
        log = open(f"{path}_beside{k}.log", "w")
        beside.append((subprocess.Popen([harness, *arguments, "--out", f"{path}_beside{k}"],
                                        stdout=log, stderr=subprocess.STDOUT), log))
    try:
        measure(path, arguments, what)
    finally:
        failed = []
        for k, (process, log) in enumerate(beside, 1):
            if process.wait():
                failed.append(k)
            log.close()
    if failed:
        sys.exit(f"error: measuring {what} beside it failed; see {path}_beside{failed[0]}.log")

def run_measurement(run, folder, marker):
    """<OUT>/profiles/<run>/<folder>, measured right after the run (--profile-run), else taken
    from PROFILES where that validation measured it so; None when neither has it (an earlier
    validation that measured once after all its runs)."""
    path = os.path.join(out, "profiles", run, folder)
    if not os.path.exists(os.path.join(path, marker)):
        earlier = os.environ.get("PROFILES")
        source = os.path.join(earlier or "", "profiles", run, folder)
        if not earlier or not os.path.exists(os.path.join(source, marker)):
            return None
        shutil.copytree(source, path)
    return path

def measured_profile(folder, options, run):
    """The layer profile of `run` (run_measurement), else <OUT>/<folder>/graph.txt: there
    already, else taken from PROFILES (an earlier validation's OUT: the same runs simulated
    again with the same inputs, so that what moves is the model alone; a new profile carries
    the VM's speed phase), else measured now by `harness profile layers <options>`."""
    if own := run_measurement(run, folder, "graph.txt"):
        return os.path.join(own, "graph.txt")
    path = os.path.join(out, folder)
    if not os.path.exists(os.path.join(path, "graph.txt")):
        earlier = os.environ.get("PROFILES")
        if earlier:
            source = os.path.join(earlier, folder)
            if not os.path.exists(os.path.join(source, "graph.txt")):
                print(f"error: {source}/graph.txt: no such profile", file=sys.stderr)
                sys.exit(2)
            shutil.copytree(source, path)
        else:
            measure(path, ["profile", "layers", *options], f"the profile {folder}")
    return os.path.join(path, "graph.txt")

@functools.lru_cache(maxsize=None)
def measured_copy(run):
    """--set options for the simulation's bucket_copy_bandwidth and _latency_us (COPY_COMMAND's
    fit): the run's own (run_measurement), else one for all runs: from PROFILES where that
    validation measured it, else measured now; COPIES=0 leaves the passes unpriced (the model
    before 2026-11-27)."""
    if os.environ.get("COPIES") == "0":
        return ()
    path = run_measurement(run, "copy", "comm.json") or os.path.join(out, "copy")
    if not os.path.exists(os.path.join(path, "comm.json")):
        earlier = os.environ.get("PROFILES")
        if earlier and os.path.exists(os.path.join(earlier, "copy", "comm.json")):
            shutil.copytree(os.path.join(earlier, "copy"), path)
        else:
            measure(path, COPY_COMMAND, "the bucket copy")
    fit = next(f for f in json.load(open(os.path.join(path, "comm.json")))["fits"]
               if f["op"] == "copy")
    return (f"simulate.cluster.bucket_copy_bandwidth={fit['bus_bandwidth_bytes_per_s']}",
            f"simulate.cluster.bucket_copy_latency_us={max(0.0, fit['latency_us'])}")

def co_located_options(model, batch, world):
    """SHAPE=planner: the profile of the run's model at `batch` samples, `world` copies in
    lockstep on the CPU clock (the simulation shares the host's cores itself): its folder and
    the options of `harness profile layers`."""
    options = ["--model", model["name"], "--batch", str(batch), "--co-located", str(world),
               "--clock", "cpu", "--repetitions", "10", "--warmup", "2"]
    for key, flag in (("width", "--width"), ("depth", "--depth"), ("num_classes", "--num-classes")):
        if model.get(key):
            options += [flag, str(model[key])]
    if model.get("input_shape"):
        options += ["--input-shape", ",".join(map(str, model["input_shape"]))]
    return f"profile-b{batch}-co{world}", options

@functools.lru_cache(maxsize=None)
def point_id_of(real, label):
    """The id (p000, ...) of the point of `real` labelled `label` (its manifest.json)."""
    return next(p["id"] for p in json.load(open(os.path.join(real, "manifest.json")))["points"]
                if p["label"] == label)

def planner_point(real, point_id):
    """SHAPE=planner, one point of one run: its plan file, its micro-batches, the model, the
    world, and a pipeline replica's share of a micro-batch."""
    work = glob.glob(os.path.join(real, "plans", "planned-*"))[0]
    raw = os.path.join(real, "raw", point_id)
    model = json.load(open(os.path.join(raw, "overlap", "rep0", "config.json")))["model"]
    planned = json.load(open(os.path.join(raw, "planned", "rep0", "config.json")))["system"]["pipeline"]
    world = len(glob.glob(os.path.join(raw, "overlap", "rep0", "rank*.csv")))
    micro_batches = planned["micro_batches"]
    share = model["batch_size"] * world // micro_batches // len(planned["stages"][0]["ranks"])
    return os.path.join(work, point_id, "plan.json"), micro_batches, model, world, share

@functools.lru_cache(maxsize=None)
def profile_options(real):
    """Every layer profile `real` is simulated with: {folder: options of harness profile
    layers}. SHAPE=planner: DDP's at the rank's batch and each point's plan at a replica's share
    of a micro-batch; else PROFILE_SET's."""
    if shape != "planner":
        return {folder: model_options.split() + ["--batch", batch] + options
                for folder, batch, _, *options in map(str.split, profile_set.splitlines())}
    wanted = {}
    for point in json.load(open(os.path.join(real, "manifest.json")))["points"]:
        _, _, model, world, share = planner_point(real, point["id"])
        for batch in (model["batch_size"], share):
            folder, options = co_located_options(model, batch, world)
            wanted[folder] = options
    return wanted

def profile_run(real):
    """Measures right after `real` what it is simulated with, into <OUT>/profiles/<run>/."""
    dest = os.path.join(out, "profiles", os.path.basename(real.rstrip("/")))
    os.makedirs(dest, exist_ok=True)
    for folder, options in profile_options(real).items():
        measure(os.path.join(dest, folder), ["profile", "layers", *options], f"the profile {folder}")
    if os.environ.get("COPIES") != "0":
        measure(os.path.join(dest, "copy"), COPY_COMMAND, "the bucket copy")
    if shape == "tensor":
        measure_beside(os.path.join(dest, "collectives"), COLLECTIVES_COMMAND, "the collectives", 1)

if reals[:1] == ["--profile-run"]:
    profile_run(reals[1])
    sys.exit(0)

def profiles_of(real, label):
    """The profiles of one point of one run, as (extra --set options, systems taken from that
    simulation). SHAPE=planner: the plan the run's planner chose at that point, with the run's
    micro-batches; DDP priced at the rank's batch and the pipeline at a replica's share of a
    micro-batch, each measured as the runs compute (all ranks at once)."""
    run = os.path.basename(real.rstrip("/"))
    options = profile_options(real)
    if shape != "planner":
        def own_systems(systems):  # SHAPE=tensor: the simulation's systems, this profile's alone
            if shape != "tensor":
                return []
            names = systems.split(",")
            return [f"simulate.systems=[{', '.join(TENSOR_SYSTEMS[n] for n in names)}]",
                    f"simulate.baseline={names[0]}"]
        return [([f"simulate.model.profile={measured_profile(folder, options[folder], run)}",
                  f"simulate.model.pbs={batch}", *own_systems(systems)], systems.split(","))
                for folder, batch, systems, *_ in map(str.split, profile_set.splitlines())]
    plan, micro_batches, model, world, share = planner_point(real, point_id_of(real, label))
    systems = f"[overlap, {{name: planned, kind: pipeline, schedule: dapple, plan: '{plan}'}}]"
    common = [f"simulate.systems={systems}", f"simulate.pipeline.micro_batches={micro_batches}",
              f"simulate.model.batch_size={model['batch_size']}"]
    def priced(batch, system):
        folder, _ = co_located_options(model, batch, world)
        graph = measured_profile(folder, options[folder], run)
        return ([f"simulate.model.profile={graph}", f"simulate.model.pbs={batch}"] + common,
                [system])
    return [priced(model["batch_size"], "overlap"), priced(share, "planned")]

def compute_of_run(real, point_id, system):
    """COMPUTE=runs: what a pipeline's ranks computed at a point, per micro-batch: {(first layer,
    last layer): (forward ms, backward ms)}, the median iteration of each rank
    (pipeline_rank<r>.json), then the median over a stage's replicas. Empty for DDP, whose
    backward_ms runs until the last bucket's all-reduce is done: its profile stays."""
    stages = {}
    for path in sorted(glob.glob(os.path.join(real, "raw", point_id, system, "rep0",
                                              "pipeline_rank*.json"))):
        rank = json.load(open(path))
        stages.setdefault(tuple(rank["layers"]), []).append(tuple(
            statistics.median(i[key] for i in rank["iterations"]) / rank["micro_batches"]
            for key in ("forward_ms", "backward_ms")))
    return {layers: tuple(statistics.median(t[k] for t in times) for k in (0, 1))
            for layers, times in stages.items()}

def graph_with_run_compute(graph, real, point_id, system, dest):
    """A copy of `graph` (and the profile.json beside it) in `dest` whose layers of each stage
    are scaled to the run's own compute (compute_of_run); returns the new graph's path (`graph`
    itself where the run has no stage times: DDP)."""
    compute = compute_of_run(real, point_id, system)
    if not compute:
        return graph
    lines = open(graph).read().splitlines()
    layers = json.load(open(os.path.join(os.path.dirname(graph), "profile.json")))["layers"]
    for span, (forward, backward) in compute.items():
        first, last = span
        scale = {key: measured / max(sum(l[key]["median_ms"] for l in layers[first:last + 1]), 1e-9)
                 for key, measured in (("forward", forward), ("backward", backward))}
        for k, line in enumerate(lines):
            node = re.match(r"node(\d+) -- ", line)
            if node and first <= int(node.group(1)) - 1 <= last:  # node0 is the input
                for key in scale:
                    line = re.sub(rf"({key}_compute_time)=([0-9.e+-]+)",
                                  lambda m: f"{m.group(1)}={float(m.group(2)) * scale[key]:.6f}", line)
                lines[k] = line
    os.makedirs(dest, exist_ok=True)
    shutil.copy(os.path.join(os.path.dirname(graph), "profile.json"), dest)
    open(os.path.join(dest, "graph.txt"), "w").write("\n".join(lines) + "\n")
    return os.path.join(dest, "graph.txt")

def simulate(real, n, link, label):
    """The simulated p50 of each system at one point (on link n) of one real run, from its
    measured link: {system: {"plain": p50, "bucket": p50 with the link's token bucket}}."""
    run = os.path.basename(real.rstrip("/"))
    topology = os.path.join(real, link["topology"])
    latency = link["inter_machine_measured"]["one_way_latency_us"]
    # The token bucket the link was shaped with (older runs have none).
    bucket = link["inter_machine_configured"].get("token_bucket_bytes") or 0
    # What of a core a rank's communication kept busy through the all-reduce (older runs have
    # none): where the machines share a host's cores, the simulation shares it too.
    comm_cores = link["inter_machine_measured"].get("allreduce_cpu_cores_per_rank")
    # The same for the all-reduce among one machine's ranks (older runs have none).
    intra_cores = (link.get("intra_machine_measured") or {}).get("allreduce_cpu_cores_per_rank")
    # What a burst from the bucket costs, the probe's `burst` ping-pong (older runs have
    # none): its latency after the link idled and the host's path below the bucket.
    burst_latency = link["inter_machine_measured"].get("burst_latency_us")
    burst_bandwidth = (link["inter_machine_measured"].get("burst_bits_per_s") or 0) / 8
    # What a send call holds its thread for when it writes its own message, the probe's `burst`
    # initiator's calls (older runs have none); SEND_CALL=0 leaves it out (the model before).
    send_call = link["inter_machine_measured"].get("send_call_us")
    # What a message longer than the bucket took beyond the burst model of it (older runs have
    # none); PAST_BUCKET=0 leaves it out.
    past_bucket = link["inter_machine_measured"].get("past_bucket_latency_us")
    # The all-gather's and reduce-scatter's own fits, where the probe measured them (a study
    # with sharded systems; older runs have none): the sharded systems' collectives.
    gathers = [(key, link["inter_machine_measured"].get(f"{op}_latency_us"),
                (link["inter_machine_measured"].get(f"{op}_bus_bits_per_s") or 0) / 8)
               for key, op in (("gather", "allgather"), ("scatter", "reducescatter"))]
    point_id = point_id_of(real, label)
    # Where the simulation shares a host's cores among its machines (4x1, planner: the spec's
    # cluster.machines_per_host), the host has the cores the run's machine had (env.json): 2
    # here, a core per rank and more on a larger host.
    cores = json.load(open(os.path.join(real, "env.json"))).get("logical_cores")
    # SHAPE=tensor: the run's collectives, timed after compute on loopback (profile_run).
    collectives = run_measurement(run, "collectives", "comm.json") if shape == "tensor" else None
    if shape == "tensor" and not collectives:
        sys.exit(f"error: {run}: no collectives' profile (profiles/{run}/collectives)")
    simulated = {}
    for k, (extra, systems) in enumerate(profiles_of(real, label)):
        if os.environ.get("COMPUTE") == "runs":
            ranks = len(glob.glob(os.path.join(real, "raw", point_id, systems[0], "rep0", "rank*.csv")))
            if shape != "2x1" and (cores or 0) < 2 * ranks:
                sys.exit(f"error: COMPUTE=runs: {real} ran {ranks} ranks on {cores} cores (the "
                         "runs' stage times on shared cores include the wait for a core)")
            graph = next(e.split("=", 1)[1] for e in extra if e.startswith("simulate.model.profile="))
            scaled = graph_with_run_compute(graph, real, point_id, systems[0],
                                            os.path.join(out, "run-compute", run, f"{point_id}-{k}"))
            extra = [f"simulate.model.profile={scaled}" if e.startswith("simulate.model.profile=")
                     else e for e in extra]
        for variant, burst_bytes in (("plain", 0), ("bucket", bucket)):
            sim_out = os.path.join(out, "sim", run, f"link{n}-{label.split('=')[-1]}-{k}-{variant}")
            command = [harness, "simulate", sim_spec,
                       "--set", f"simulate.cluster.topology={topology}",
                       "--set", f"simulate.cluster.inter_latency_us={latency}",
                       "--set", f"simulate.cluster.inter_burst_bytes={burst_bytes}",
                       "--set", f"output={sim_out}"]
            if shape != "2x1" and cores:
                command += ["--set", f"simulate.cluster.cpu_cores={cores}"]
            if collectives:
                command += ["--set", f"simulate.cluster.comm_profile={collectives}/comm.json"]
            if comm_cores:
                command += ["--set", f"simulate.cluster.comm_cores_per_rank={comm_cores}"]
            if intra_cores:
                command += ["--set", f"simulate.cluster.intra_comm_cores_per_rank={intra_cores}"]
            if burst_latency is not None and os.environ.get("BURST_COST") != "0":
                command += ["--set", f"simulate.cluster.inter_burst_latency_us={burst_latency}"]
                if burst_bandwidth > 0:
                    command += ["--set", f"simulate.cluster.inter_burst_bandwidth={burst_bandwidth}"]
                if past_bucket is not None and os.environ.get("PAST_BUCKET") != "0":
                    command += ["--set", f"simulate.cluster.inter_past_bucket_latency_us={past_bucket}"]
            for key, gather_latency, gather_bandwidth in gathers:
                if gather_latency is not None and gather_bandwidth > 0:
                    command += ["--set", f"simulate.cluster.{key}_latency_us={gather_latency}",
                                "--set", f"simulate.cluster.{key}_bandwidth={gather_bandwidth}"]
            if send_call is not None and os.environ.get("SEND_CALL") != "0":
                command += ["--set", f"simulate.cluster.inter_send_call_us={send_call}"]
            # Compute after a wait (profile.json after_idle, measured with the profiles; older
            # profiles have none): not with COMPUTE=runs, whose stage times already hold it; AFTER_IDLE=0
            # leaves it out (the model before).
            if os.environ.get("COMPUTE") == "runs" or os.environ.get("AFTER_IDLE") == "0":
                command += ["--set", "simulate.model.after_idle=false"]
            for option in [*measured_copy(run), *extra]:
                command += ["--set", option]
            # Exit 1: a run the simulator could not price (a plan for another cluster): left out.
            if subprocess.run(command, stdout=subprocess.DEVNULL).returncode not in (0, 1):
                raise SystemExit(f"error: {' '.join(command)} failed")
            sim_dir = os.path.join(sim_out, os.path.splitext(os.path.basename(sim_spec))[0])
            sim_dir = os.path.join(sim_dir, sorted(os.listdir(sim_dir))[-1])
            for s in json.load(open(os.path.join(sim_dir, "summary.json")))["points"][0]["systems"]:
                if s["name"] in systems and "iteration" in s["phases"]:
                    simulated.setdefault(s["name"], {})[variant] = s["phases"]["iteration"]["p50"]
    return simulated

def median_interval(values):
    """Order statistics [x_(k), x_(n+1-k)] around the median: the narrowest with coverage of at
    least 95%, else (fewer than 6 values) the widest; returns (low, high, coverage)."""
    x, n = sorted(values), len(values)
    below = lambda j: sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n  # P(Bin(n, 1/2) <= j)
    best = (x[0], x[-1], 1 - 2 * below(0))
    for k in range(1, (n + 1) // 2 + 1):
        coverage = 1 - 2 * below(k - 1)
        if coverage < 0.95:
            break
        best = (x[k - 1], x[n - k], coverage)
    return best

# The last column's variant (BURST=1: with the links' token buckets) and the other one.
main, other = ("bucket", "plain") if burst else ("plain", "bucket")
cells = {}  # (rate, system) -> {"p50": [...], main: [...], other: [...], "count": .., "p2p": [...]}
for real in reals:
    env = json.load(open(os.path.join(real, "env.json")))
    summary = json.load(open(os.path.join(real, "summary.json")))
    measured = {p["label"]: {s["name"]: s["phases"]["iteration"] for s in p["systems"]}
                for p in summary["points"]}
    for n, link in enumerate(env["emulated_links"]):
        rate = link["inter_machine_configured"]["rate_bits_per_s"]
        for label in link["points"]:
            simulated = simulate(real, n, link, label)
            for system, phase in measured[label].items():
                if system not in simulated:
                    print(f"note: {real} {label} {system}: not simulated", file=sys.stderr)
                    continue
                cell = cells.setdefault((rate, system), {"p50": [], main: [], other: [], "p2p": []})
                cell["p50"].append(phase["p50"])
                for variant in (main, other):
                    cell[variant].append(simulated[system][variant])
                cell["p2p"].append(link["inter_machine_measured"]["p2p_bits_per_s"])
                cell["count"] = phase["count"]
names = {"plain": "without the token bucket", "bucket": "with the links' token bucket"}
print(f"{len(reals)} real run(s): {' '.join(reals)}")
if os.environ.get("COMPUTE") == "runs":
    print("COMPUTE=runs: every stage computes what the run's own ranks computed (a diagnostic)")
print(f"| link (configured) | measured p2p (median) | system | median of run p50s (ms) | range | "
      f"interval of the median (coverage) | runs x samples | simulated {names[other]} (error) | "
      f"simulated p50 {names[main]} (median, ms) | error |")
print("|---|---:|---|---:|---|---|---:|---:|---:|---:|")
errors, other_errors = [], []
for (rate, system), cell in sorted(cells.items()):
    median = statistics.median(cell["p50"])
    low, high, coverage = median_interval(cell["p50"])
    sim, sim_other = statistics.median(cell[main]), statistics.median(cell[other])
    error, error_other = 100 * (sim / median - 1), 100 * (sim_other / median - 1)
    errors.append(abs(error))
    other_errors.append(abs(error_other))
    print(f"| {rate / 1e6:.0f} Mbit/s | {statistics.median(cell['p2p']) / 1e6:.1f} Mbit/s | {system} | "
          f"{median:.2f} | {min(cell['p50']):.2f} - {max(cell['p50']):.2f} | "
          f"{low:.2f} - {high:.2f} ({100 * coverage:.1f}%) | {len(cell['p50'])} x {cell['count']} | "
          f"{sim_other:.2f} ({error_other:+.1f}%) | {sim:.2f} | {error:+.1f}% |")
for label, errs in ((names[main], errors), (names[other], other_errors)):
    print(f"\n{label}: worst error {max(errs):.1f}%, median absolute error "
          f"{statistics.median(errs):.1f}%; cells within 10%: {sum(e <= 10 for e in errs)} of {len(errs)}")
PY
validate() {
  python3 "$SCRIPT" "$OUT" "$HARNESS" "${BURST:-0}" "${SIM_SPEC:-experiments/$SIMULATION.yaml}" \
    "${SHAPE:-2x1}" "${MODEL[*]:-}" "$(printf '%s\n' ${PROFILE_SET[@]+"${PROFILE_SET[@]}"})" "$@"
}
if [[ -z "${REAL:-}" ]]; then
  for run in $(seq "${RUNS:-5}"); do
    "$HARNESS" run "experiments/$STUDY.yaml" --set "output=$OUT/real" \
      ${LEVELS:+--set "sweep.cluster.network.inter_machine.bandwidth=[$LEVELS]"} \
      ${QUICK:+--quick} > "$OUT/real-$run.log" 2>&1 || { tail -5 "$OUT/real-$run.log"; exit 1; }
    # Its profiles and copy fit, right after it (seconds, in the run's minutes).
    validate --profile-run "$(ls -d "$OUT/real/$STUDY"/*/ | tail -1)"
    echo "real run $run/${RUNS:-5} done ($(($(date +%s) - start)) s)" >&2
  done
  REAL=$(ls -d "$OUT/real/$STUDY"/*/)
fi
# The profiles are those measured after each run (or taken from PROFILES, or measured now for
# earlier runs that have none), before any simulation.
# shellcheck disable=SC2086  # REAL: several folders
validate $REAL
echo "($(($(date +%s) - start)) s; files in $OUT)"
