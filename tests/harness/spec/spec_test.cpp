// Spec loading: validation errors (with file:line:column and the key), sweep expansion,
// --set overrides and --quick.
#include "harness/spec/spec.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/input_error.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/spec_kind.h"
#include "harness/spec/sweep.h"
#include "tests/harness/spec/spec_test_util.h"
#include "tests/test_util.h"

namespace {

using harness::Experiment;
using harness::InputError;
using harness::LoadOptions;
using harness_test::TempDir;

const char* kValidSpec = R"(name: demo
model:
  name: mlp
  batch_size: 8
run:
  world_size: 2
  iterations: 10
  warmup: 2
systems: [overlap, sync, {name: big, mode: async, bucket_mb: 50}]
baseline: sync
sweep:
  ddp.bucket_mb: [1, 5, 25]
  model.batch_size: [4, 8]
)";

LoadOptions options_with(std::vector<std::string> overrides = {}, bool quick = false) {
  LoadOptions options;
  options.known_models = {"resnet50", "resnet18", "mlp"};
  options.overrides = std::move(overrides);
  options.quick = quick;
  return options;
}

std::string error_of(const std::string& text, std::vector<std::string> overrides = {}) {
  return harness_test::spec_load_error(text, options_with(std::move(overrides)));
}

std::string replace(const std::string& text, const std::string& from, const std::string& to) {
  return harness_test::replace_once(text, from, to);
}

TEST(Spec, LoadsAndExpandsTheSweepAsACartesianProduct) {
  TempDir dir;
  const Experiment e =
      harness::load_experiment(dir.write("s.yaml", kValidSpec).string(), options_with());
  EXPECT_EQ(e.name, "demo");
  EXPECT_EQ(e.baseline, "sync");
  ASSERT_EQ(e.systems.size(), 3u);
  EXPECT_EQ(e.systems[2].name, "big");
  EXPECT_EQ(e.systems[2].gradients.mode, "async");
  EXPECT_DOUBLE_EQ(*e.systems[2].bucket_mb, 50.0);
  ASSERT_EQ(e.points.size(), 6u);
  // The last axis varies fastest.
  EXPECT_EQ(e.points[0].label, "ddp.bucket_mb=1, model.batch_size=4");
  EXPECT_EQ(e.points[1].label, "ddp.bucket_mb=1, model.batch_size=8");
  EXPECT_EQ(e.points[5].label, "ddp.bucket_mb=25, model.batch_size=8");
  EXPECT_EQ(e.points[5].id, "p005");
  EXPECT_DOUBLE_EQ(e.points[2].config.ddp.bucket_mb, 5.0);
  EXPECT_EQ(e.points[2].config.model.batch_size, 4);
  EXPECT_EQ(e.points[3].config.model.batch_size, 8);
  EXPECT_EQ(e.points[0].config.run.world_size, 2);
  EXPECT_EQ(e.points[0].config.model.input_shape, std::vector<long long>{64});
  EXPECT_EQ(harness::run_count(e), 18u);
}

TEST(Spec, NoSweepGivesOneDefaultPoint) {
  TempDir dir;
  const std::string text =
      "name: one\nmodel: {name: mlp, batch_size: 2}\n"
      "run: {iterations: 3}\nsystems: [overlap]\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  ASSERT_EQ(e.points.size(), 1u);
  EXPECT_EQ(e.points[0].label, "default");
  EXPECT_EQ(e.baseline, "overlap");  // first system by default
  EXPECT_DOUBLE_EQ(e.points[0].config.ddp.bucket_mb, 25.0);
}

TEST(Spec, HeapPolicyDefaultsToRetainAndIsChecked) {
  TempDir dir;
  const std::string text =
      "name: one\nmodel: {name: mlp, batch_size: 2}\n"
      "run: {iterations: 3}\nsystems: [overlap]\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  EXPECT_EQ(e.points[0].config.run.heap, "retain");
  const Experiment system = harness::load_experiment(
      dir.write("t.yaml", replace(text, "iterations: 3", "iterations: 3, heap: system")).string(),
      options_with());
  EXPECT_EQ(system.points[0].config.run.heap, "system");
  EXPECT_EQ(error_of(replace(kValidSpec, "  warmup: 2", "  warmup: 2\n  heap: keep")),
            "spec.yaml:9:9: run.heap: unknown value 'keep' (expected one of: retain, system)");
}

// A searched SPMD strategy's operators are timed (`compute: measured`) on the CPU: a point on
// CUDA is refused at its system, and loads priced by FLOPs; a `gflops` that measured compute
// would not use is refused at its key.
TEST(Spec, SpmdMeasuresItsOperatorsOnTheCpuOnly) {
  TempDir dir;
  const std::string comm =
      dir.write(
             "comm.json",
             R"({"fits": [{"op": "allreduce", "latency_us": 1, "bus_bandwidth_bytes_per_s": 1e9}]})")
          .string();
  const std::string spec =
      "name: s\nmodel: {name: llama, batch_size: 2, loss: cross_entropy}\n"
      "run: {world_size: 2, iterations: 3, warmup: 1, device: cuda}\n"
      "systems:\n  - {name: hidup, kind: spmd, comm: " +
      comm + ", compute: measured}\n";
  LoadOptions options = options_with();
  options.known_models.push_back("llama");
  options.rank_devices = [] { return harness::RankDevices{2, true}; };
  EXPECT_EQ(harness_test::spec_load_error(spec, options),
            "spec.yaml:5:5: systems: hidup: compute: measured times the operators on the CPU, not "
            "run.device cuda (price them by flops)");
  EXPECT_EQ(harness_test::spec_load_error(replace(spec, "kind: spmd,", "kind: spmd, gflops: 80,"),
                                          options),
            "spec.yaml:5:39: systems.gflops: compute: measured prices compute by the operators' "
            "times, so gflops would go unused (drop it, or compute: flops)");
  const std::string flops = replace(spec, "compute: measured", "gflops: 80");
  const Experiment loaded = harness::load_experiment(dir.write("f.yaml", flops).string(), options);
  EXPECT_FALSE(loaded.systems.at(0).spmd->measured_compute);
  EXPECT_EQ(loaded.points.at(0).config.run.device, "cuda");
}

// A run that says cuda must train on cuda: what the machine's GPUs or the rank program's
// LibTorch cannot give is refused where the spec says it (ranks_on_machine: the local
// launcher's world); where they can, the spec loads with device and backend as said.
TEST(Spec, CudaAndNcclAreCheckedAgainstTheRankProgramsGpus) {
  const auto with_run = [](const std::string& more) {
    return replace(kValidSpec, "  warmup: 2", "  warmup: 2\n" + more);
  };
  const auto error_with = [](const std::string& text, int gpus, bool nccl) {
    LoadOptions options = options_with();
    options.rank_devices = [=] { return harness::RankDevices{gpus, nccl}; };
    return harness_test::spec_load_error(text, options);
  };
  EXPECT_EQ(error_with(with_run("  device: cuda"), 0, false),
            "spec.yaml:9:11: run.device: cuda, but the rank program's LibTorch sees no CUDA "
            "device here (use cpu)");
  EXPECT_EQ(error_with(with_run("  device: cuda\n  backend: nccl"), 8, false),
            "spec.yaml:10:12: run.backend: nccl, but the rank program's LibTorch was built "
            "without NCCL (use gloo)");
  // kValidSpec has 2 ranks: one GPU is enough for Gloo ranks sharing it, not for NCCL.
  EXPECT_EQ(error_with(with_run("  device: cuda\n  backend: nccl"), 1, true),
            "spec.yaml:10:12: run.backend: 2 ranks on a machine with 1 GPU(s): NCCL needs a GPU "
            "of its own per rank (fewer ranks, or backend: gloo to share)");
  const auto loaded = [&](const std::string& text, int gpus) {
    TempDir dir;
    LoadOptions options = options_with();
    options.rank_devices = [=] { return harness::RankDevices{gpus, true}; };
    return harness::load_experiment(dir.write("s.yaml", text).string(), options).points[0];
  };
  EXPECT_EQ(loaded(with_run("  device: cuda"), 1).config.run.backend, "gloo");
  const auto nccl = loaded(with_run("  device: cuda\n  backend: nccl"), 2);
  EXPECT_EQ(nccl.config.run.device, "cuda");
  EXPECT_EQ(nccl.config.run.backend, "nccl");
  // Every system the rank program runs goes on the GPU, a pipeline too (expert parallelism
  // likewise): two ranks sharing one GPU over Gloo; over NCCL each needs a GPU, as DDP's do.
  const std::string pipelines =
      replace(with_run("  device: cuda"),
              "systems: [overlap, sync, {name: big, mode: async, bucket_mb: 50}]",
              "systems: [sync, {name: p, kind: pipeline, stages: 2}]");
  TempDir gpu_dir;
  LoadOptions one_gpu = options_with();
  one_gpu.rank_devices = [] { return harness::RankDevices{1, true}; };
  const auto on_gpu =
      harness::load_experiment(gpu_dir.write("p.yaml", pipelines).string(), one_gpu);
  EXPECT_EQ(on_gpu.points[0].config.run.device, "cuda");
  ASSERT_EQ(on_gpu.systems.size(), 2u);
  EXPECT_EQ(on_gpu.systems[1].kind(), harness::SystemKind::kPipeline);
  EXPECT_EQ(
      error_with(replace(pipelines, "device: cuda", "device: cuda\n  backend: nccl"), 1, true),
      "spec.yaml:10:12: run.backend: 2 ranks on a machine with 1 GPU(s): NCCL needs a GPU "
      "of its own per rank (fewer ranks, or backend: gloo to share)");
  // Without the rank program's answer (a cluster launcher's ranks run elsewhere) cuda and nccl
  // are taken on trust: each rank checks its own machine.
  TempDir dir;
  EXPECT_EQ(
      harness::load_experiment(
          dir.write("t.yaml", with_run("  device: cuda\n  backend: nccl")).string(), options_with())
          .points[0]
          .config.run.backend,
      "nccl");
  // nccl needs cuda, so it cannot slip through on its own either.
  EXPECT_EQ(error_of(with_run("  backend: nccl")),
            "spec.yaml:9:12: run.backend: nccl needs run.device: cuda");
}

// tf32 is a GPU's math: refused for a CPU run where run.device says so (or where it would, when
// the run section leaves the device at cpu), loaded for a cuda run.
TEST(Spec, Tf32NeedsAGpu) {
  const std::string tf32 =
      replace(kValidSpec, "  batch_size: 8", "  batch_size: 8\n  precision: tf32");
  EXPECT_EQ(error_of(replace(tf32, "  warmup: 2", "  warmup: 2\n  device: cpu")),
            "spec.yaml:10:11: run.device: model.precision tf32 needs device cuda (the CPU has no "
            "TF32 math; use fp32 or bf16)");
  EXPECT_EQ(error_of(tf32),
            "spec.yaml:7:3: run: model.precision tf32 needs device cuda (the CPU has no TF32 "
            "math; use fp32 or bf16)");
  TempDir dir;
  LoadOptions options = options_with();
  options.rank_devices = [] { return harness::RankDevices{1, true}; };
  const Experiment e = harness::load_experiment(
      dir.write("s.yaml", replace(tf32, "  warmup: 2", "  warmup: 2\n  device: cuda")).string(),
      options);
  EXPECT_EQ(e.points[0].config.model.precision, "tf32");
}

// run.cpu_idle: the OS's idle states by default, polling when asked, anything else refused at
// its line and column.
TEST(Spec, CpuIdleDefaultsToTheOsAndIsChecked) {
  TempDir dir;
  const std::string text =
      "name: one\nmodel: {name: mlp, batch_size: 2}\n"
      "run: {iterations: 3}\nsystems: [overlap]\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  EXPECT_EQ(e.points[0].config.run.cpu_idle, harness::CpuIdle::kOs);
  const Experiment poll = harness::load_experiment(
      dir.write("t.yaml", replace(text, "iterations: 3", "iterations: 3, cpu_idle: poll")).string(),
      options_with());
  EXPECT_EQ(poll.points[0].config.run.cpu_idle, harness::CpuIdle::kPoll);
  EXPECT_EQ(error_of(replace(kValidSpec, "  warmup: 2", "  warmup: 2\n  cpu_idle: halt")),
            "spec.yaml:9:13: run.cpu_idle: unknown value 'halt' (expected one of: os, poll)");
}

// run.pin_cpus reaches the ranks' configuration; an external command is not pinned, so the
// pair is refused rather than accepted and ignored.
TEST(Spec, PinCpusIsReadAndRefusedForExternalSystems) {
  TempDir dir;
  const std::string text =
      "name: one\nmodel: {name: mlp, batch_size: 2}\n"
      "run: {iterations: 3, pin_cpus: true}\nsystems: [overlap]\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  EXPECT_TRUE(e.points[0].config.run.pin_cpus);
  const std::string external = replace(
      text, "systems: [overlap]",
      "systems: [{name: ext, kind: external, command: [\"/bin/true\"], timings: {format: regex, "
      "pattern: \"t=(?<iteration_ms>[0-9.]+)\"}}]");
  EXPECT_NE(error_of(external).find("systems: ext: run.pin_cpus binds the harness's own ranks; an "
                                    "external system's command is not pinned"),
            std::string::npos)
      << error_of(external);
}

TEST(Spec, MisspeltKeyNamesLocationAndSuggestsTheKey) {
  const std::string text = replace(kValidSpec, "  warmup: 2", "  wramup: 2");
  EXPECT_EQ(error_of(text), "spec.yaml:8:3: unknown key 'run.wramup' (did you mean 'warmup'?)");
}

TEST(Spec, UnknownTopLevelKeyIsAnError) {
  EXPECT_EQ(error_of(std::string(kValidSpec) + "colour: blue\n"),
            "spec.yaml:14:1: unknown key 'colour'");
}

TEST(Spec, MisspeltTopLevelKeySuggests) {
  const std::string text = replace(kValidSpec, "baseline: sync", "baselin: sync");
  EXPECT_EQ(error_of(text), "spec.yaml:10:1: unknown key 'baselin' (did you mean 'baseline'?)");
}

TEST(Spec, WorldSizeBelowOneIsRejected) {
  const std::string text = replace(kValidSpec, "world_size: 2", "world_size: 0");
  EXPECT_EQ(error_of(text), "spec.yaml:6:15: run.world_size: must be >= 1 (got 0)");
}

TEST(Spec, WrongTypeIsRejected) {
  const std::string text = replace(kValidSpec, "iterations: 10", "iterations: many");
  EXPECT_EQ(error_of(text), "spec.yaml:7:15: run.iterations: expected an integer, got 'many'");
}

TEST(Spec, NonPositiveBucketInTheSweepPointsAtTheValue) {
  const std::string text = replace(kValidSpec, "[1, 5, 25]", "[1, 0, 25]");
  EXPECT_EQ(error_of(text), "spec.yaml:12:22: ddp.bucket_mb: must be > 0 (got 0)");
}

TEST(Spec, NegativeBucketInTheDdpSection) {
  const std::string text = std::string(kValidSpec) + "ddp:\n  bucket_mb: -3\n";
  EXPECT_EQ(error_of(text), "spec.yaml:15:14: ddp.bucket_mb: must be > 0 (got -3)");
}

TEST(Spec, BaselineMustBeOneOfTheSystems) {
  const std::string text = replace(kValidSpec, "baseline: sync", "baseline: synk");
  EXPECT_EQ(error_of(text),
            "spec.yaml:10:11: baseline: unknown value 'synk' (expected one of: overlap, sync, "
            "big); did you mean 'sync'?");
}

TEST(Spec, UnknownModelIsRejected) {
  const std::string text = replace(kValidSpec, "name: mlp", "name: resnet51");
  EXPECT_EQ(error_of(text),
            "spec.yaml:3:9: model.name: unknown value 'resnet51' (expected one of: resnet50, "
            "resnet18, mlp); did you mean 'resnet50'?");
}

TEST(Spec, UnknownSystemModeIsRejected) {
  const std::string text = replace(kValidSpec, "[overlap, sync,", "[overlap, sink,");
  EXPECT_EQ(error_of(text),
            "spec.yaml:9:20: systems: unknown system 'sink' (expected one of: overlap, sync, "
            "async, per_tensor); did you mean 'sync'?");
}

TEST(Spec, DuplicateSystemNamesAreRejected) {
  const std::string text = replace(kValidSpec, "[overlap, sync,", "[overlap, overlap,");
  EXPECT_EQ(error_of(text), "spec.yaml:9:20: systems: duplicate system name 'overlap'");
}

TEST(Spec, SweepOfAnUnknownPathSuggestsTheSweepablePath) {
  const std::string text = replace(kValidSpec, "ddp.bucket_mb:", "ddp.bucket_bm:");
  EXPECT_EQ(error_of(text),
            "spec.yaml:12:3: sweep: unknown key 'ddp.bucket_bm' (did you mean 'ddp.bucket_mb'?)");
}

TEST(Spec, MissingRequiredKeyIsNamed) {
  const std::string text = replace(kValidSpec, "  iterations: 10\n", "");
  EXPECT_EQ(error_of(text), "spec.yaml:6:3: missing required key 'run.iterations'");
}

TEST(Spec, YamlSyntaxErrorHasLocation) {
  const std::string message = error_of("name: x\nmodel: {name: mlp\nrun: 3\n");
  EXPECT_EQ(message.rfind("spec.yaml:3:", 0), 0u) << message;
  EXPECT_NE(message.find("YAML syntax error"), std::string::npos) << message;
}

TEST(Spec, MissingFileIsAnInputError) {
  try {
    harness::load_experiment("/nonexistent/spec.yaml", options_with());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/spec.yaml: cannot open file");
  }
}

TEST(Overrides, SetReplacesValuesAndSweeps) {
  TempDir dir;
  const Experiment e = harness::load_experiment(
      dir.write("s.yaml", kValidSpec).string(),
      options_with({"run.world_size=4", "sweep.ddp.bucket_mb=[2, 3]", "optimizer.lr=0.5"}));
  ASSERT_EQ(e.points.size(), 4u);
  EXPECT_EQ(e.points[0].config.run.world_size, 4);
  EXPECT_DOUBLE_EQ(e.points[0].config.optimizer.lr, 0.5);
  EXPECT_DOUBLE_EQ(e.points[3].config.ddp.bucket_mb, 3.0);
}

TEST(Overrides, ErrorsNameTheOption) {
  EXPECT_EQ(error_of(kValidSpec, {"run.world_size=-1"}),
            "--set run.world_size=-1: run.world_size: must be >= 1 (got -1)");
  EXPECT_EQ(error_of(kValidSpec, {"run.wold_size=3"}),
            "--set run.wold_size=3: unknown key 'run.wold_size' (did you mean 'world_size'?)");
  EXPECT_EQ(error_of(kValidSpec, {"sweep.ddp.bucket_mb=[0]"}),
            "--set sweep.ddp.bucket_mb=[0]: ddp.bucket_mb: must be > 0 (got 0)");
  EXPECT_EQ(error_of(kValidSpec, {"novalue"}), "--set novalue: expected key.path=value");
}

TEST(Quick, ShortensIterationsAndSweepsThenAppliesTheSpecsQuickBlock) {
  TempDir dir;
  const std::string text = std::string(kValidSpec) + "quick:\n  run.warmup: 1\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(),
                                                options_with({}, /*quick=*/true));
  // bucket_mb [1, 5, 25] keeps first and last; batch_size [4, 8] is already short.
  ASSERT_EQ(e.points.size(), 4u);
  EXPECT_EQ(e.points[0].label, "ddp.bucket_mb=1, model.batch_size=4");
  EXPECT_EQ(e.points[2].label, "ddp.bucket_mb=25, model.batch_size=4");
  EXPECT_EQ(e.points[0].config.run.iterations, 5);
  EXPECT_EQ(e.points[0].config.run.warmup, 1);
}

// `quick: {run: {iterations: 3}}` overrides the iterations and keeps the rest of `run:`: it
// replaced the whole map, so a study of 4 ranks ran 2 (the default) under --quick, or refused
// its 4 emulated machines.
TEST(Quick, AMapInTheQuickBlockOverridesItsKeysAndKeepsTheOthers) {
  TempDir dir;
  std::string text = std::string(kValidSpec) + "quick:\n  run: {iterations: 3}\n";
  text.replace(text.find("world_size: 2"), 13, "world_size: 4");
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(),
                                                options_with({}, /*quick=*/true));
  EXPECT_EQ(e.points[0].config.run.world_size, 4);
  EXPECT_EQ(e.points[0].config.run.iterations, 3);
  EXPECT_EQ(e.points[0].config.run.warmup, 2);
  // Its errors still point at the value in the block.
  EXPECT_EQ(error_of(std::string(kValidSpec) + "quick:\n  run: {iterations: 0}\n"),
            "spec.yaml:15:21: run.iterations: must be >= 1 (got 0)");
}

TEST(Quick, QuickBlockErrorsPointIntoTheFile) {
  TempDir dir;
  const std::string text = std::string(kValidSpec) + "quick:\n  run.iterations: 0\n";
  try {
    harness::load_experiment(dir.write("s.yaml", text).string(), options_with({}, true));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:15:19: run.iterations: must be >= 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(Quick, QuickBlockIsCheckedWithoutQuickToo) {
  const std::string text = std::string(kValidSpec) + "quick:\n  run.iterations: -1\n";
  EXPECT_EQ(error_of(text), "spec.yaml:15:19: run.iterations: must be >= 1 (got -1)");
  EXPECT_EQ(error_of(kValidSpec, {"quick.run.iterations=-1"}),
            "--set quick.run.iterations=-1: run.iterations: must be >= 1 (got -1)");
}

// Every error of a spec at once, one line each, in file order: a misspelt key no longer hides
// behind a missing one, nor an error in `run:` behind one in `model:` above it.
TEST(SpecErrors, EveryErrorIsReportedInFileOrder) {
  const std::string text = R"(name: demo
run:
  world_size: 0
  warmpu: 2
model:
  name: mlp
  batch_size: -4
systems: [overlap, synk]
)";
  EXPECT_EQ(error_of(text),
            "spec.yaml:3:3: missing required key 'run.iterations'\n"
            "spec.yaml:3:15: run.world_size: must be >= 1 (got 0)\n"
            "spec.yaml:4:3: unknown key 'run.warmpu' (did you mean 'warmup'?)\n"
            "spec.yaml:7:15: model.batch_size: must be >= 1 (got -4)\n"
            "spec.yaml:8:20: systems: unknown system 'synk' (expected one of: overlap, sync, "
            "async, per_tensor); did you mean 'sync'?");
}

TEST(SpecErrors, ASystemAtThePointIsCheckedBesideTheOtherKeys) {
  // A bad baseline used to hide the system that cannot run this model until it was fixed.
  const std::string text = R"(name: demo
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 10}
systems: [overlap, {name: ep, kind: expert_parallel}]
baseline: ddp
)";
  EXPECT_EQ(
      error_of(text),
      "spec.yaml:4:20: systems: ep: expert_parallel needs a mixture-of-experts model "
      "(bert_moe, vit_moe), not mlp\n"
      "spec.yaml:5:11: baseline: unknown value 'ddp' (expected one of: overlap, ep); did you mean "
      "'ep'?");
}

TEST(SpecErrors, EveryBadSweptValueOnceAtItsPlace) {
  // Two bad bucket caps, each met at both batch sizes, and a bad batch size: three errors,
  // not six, in file order.
  const std::string text =
      replace(replace(kValidSpec, "[1, 5, 25]", "[1, 0, -2]"), "[4, 8]", "[4, -8]");
  EXPECT_EQ(error_of(text),
            "spec.yaml:12:22: ddp.bucket_mb: must be > 0 (got 0)\n"
            "spec.yaml:12:25: ddp.bucket_mb: must be > 0 (got -2)\n"
            "spec.yaml:13:25: model.batch_size: must be >= 1 (got -8)");
}

TEST(Spec, CompressionAndPrecisionAreReadAndChecked) {
  TempDir dir;
  const std::string text =
      replace(kValidSpec, "  batch_size: 8\n", "  batch_size: 8\n  precision: bf16\n") +
      "ddp: {compression: fp16}\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  EXPECT_EQ(e.points.front().config.model.precision, "bf16");
  EXPECT_EQ(e.points.front().config.ddp.compression, "fp16");
  EXPECT_EQ(error_of(std::string(kValidSpec) + "ddp: {compression: int8}\n"),
            "spec.yaml:14:20: ddp.compression: unknown value 'int8' (expected one of: none, "
            "fp16, bf16, powersgd)");
  const Experiment powersgd = harness::load_experiment(
      dir.write("p.yaml", std::string(kValidSpec) +
                              "ddp: {compression: powersgd, powersgd_rank: 4, "
                              "powersgd_warmup_steps: 0}\n")
          .string(),
      options_with());
  EXPECT_EQ(powersgd.points.front().config.ddp.powersgd_rank, 4);
  EXPECT_EQ(powersgd.points.front().config.ddp.powersgd_warmup_steps, 0);
  // per_tensor sends no buckets: a compression there is refused before anything runs (each
  // point says so; the first line).
  const std::string per_tensor =
      error_of(replace(kValidSpec, "systems: [overlap, sync,", "systems: [per_tensor, sync,") +
               "ddp: {compression: bf16}\n");
  EXPECT_EQ(per_tensor.substr(0, per_tensor.find('\n')),
            "spec.yaml:9:10: systems: per_tensor: ddp.compression bf16 applies to buckets; "
            "per_tensor all-reduces each gradient on its own (use overlap, sync or async) (at "
            "ddp.bucket_mb=1, model.batch_size=4)");
  EXPECT_EQ(error_of(std::string(kValidSpec) + "ddp: {compression: powersgd, powersgd_rank: 0}\n"),
            "spec.yaml:14:45: ddp.powersgd_rank: must be >= 1 (got 0)");
  EXPECT_EQ(
      error_of(replace(kValidSpec, "  batch_size: 8\n", "  batch_size: 8\n  precision: fp8\n")),
      "spec.yaml:5:14: model.precision: unknown value 'fp8' (expected one of: fp32, tf32, bf16); "
      "did you mean 'fp32'?");
}

TEST(Spec, MixtureOfExpertsKeysAndTheExpertParallelSystem) {
  TempDir dir;
  LoadOptions options = options_with();
  options.known_models.push_back("bert_moe");
  const auto load = [&](const std::string& text) {
    return harness::load_experiment(dir.write("s.yaml", text).string(), options);
  };
  // The first line: each point of the sweep says it.
  const auto error_of = [&](const std::string& text) {
    const std::string all = harness_test::spec_load_error(text, options);
    return all.substr(0, all.find('\n'));
  };
  const std::string moe_spec =
      replace(replace(kValidSpec, "name: mlp", "name: bert_moe"), "  batch_size: 8\n",
              "  batch_size: 8\n  experts: 8\n  top_k: 1\n  capacity_factor: 2\n  moe_every: 1\n");
  const Experiment e = load(moe_spec);
  const auto& moe = e.points.front().config.model.moe;
  EXPECT_EQ(moe, (runtime::MoeShape{.experts = 8, .top_k = 1, .capacity_factor = 2, .every = 1}));
  // The zoo's rule, at the model map: top_k beyond the experts; keys only bert_moe takes.
  EXPECT_EQ(error_of(replace(moe_spec, "top_k: 1", "top_k: 9")),
            "spec.yaml:3:3: model: bert_moe top_k must be in [1, experts]");
  EXPECT_EQ(error_of(replace(kValidSpec, "  batch_size: 8\n", "  batch_size: 8\n  experts: 2\n")),
            "spec.yaml:3:3: model: mlp has no mixture of experts (experts, top_k, capacity_factor, "
            "moe_every are bert_moe's and vit_moe's)");

  // expert_parallel: the dense part's reducer mode defaults to overlap.
  const std::string systems = "systems: [overlap, sync, {name: big, mode: async, bucket_mb: 50}]";
  const std::string ep_systems = "systems: [sync, {name: ep, kind: expert_parallel}]";
  const Experiment ep = load(replace(moe_spec, systems, ep_systems));
  ASSERT_EQ(ep.systems.size(), 2u);
  EXPECT_EQ(ep.systems[1].kind(), harness::SystemKind::kExpertParallel);
  EXPECT_EQ(ep.systems[1].gradients.mode, "overlap");
  // Experts that do not shard over the ranks, and a dense model, named at the system.
  EXPECT_EQ(
      error_of(replace(replace(moe_spec, systems, ep_systems), "world_size: 2", "world_size: 3")),
      "spec.yaml:13:17: systems: ep: model.experts 8 do not shard evenly over 3 ranks "
      "(run.world_size) (at ddp.bucket_mb=1, model.batch_size=4)");
  EXPECT_EQ(error_of(replace(kValidSpec, systems, ep_systems)),
            "spec.yaml:9:17: systems: ep: expert_parallel needs a mixture-of-experts model "
            "(bert_moe, vit_moe), not mlp (at ddp.bucket_mb=1, model.batch_size=4)");
}

// kind: sharded: the ZeRO stage (default 3), the unit (default layer) and prefetch (default on),
// carried into the rank's config; a stage beyond 3, an unknown unit and DDP's mode refused.
TEST(Spec, ShardedSystemsAndTheirKeys) {
  TempDir dir;
  const auto error_of = [&](const std::string& text) {
    const std::string all = harness_test::spec_load_error(text, options_with());
    return all.substr(0, all.find('\n'));
  };
  const std::string systems = "systems: [overlap, sync, {name: big, mode: async, bucket_mb: 50}]";
  const std::string sharded =
      "systems: [sync, {name: z3, kind: sharded}, {name: z1, kind: sharded, stage: 1, unit: "
      "model, prefetch: false}]";
  const Experiment e = harness::load_experiment(
      dir.write("s.yaml", replace(kValidSpec, systems, sharded)).string(), options_with());
  ASSERT_EQ(e.systems.size(), 3u);
  EXPECT_EQ(e.systems[1].kind(), harness::SystemKind::kSharded);
  EXPECT_EQ(e.systems[1].data.zero_stage, 3);
  EXPECT_EQ(e.systems[1].data.unit, runtime::ShardUnitKind::kLayer);
  EXPECT_TRUE(e.systems[1].data.prefetch);
  EXPECT_EQ(e.systems[2].data.zero_stage, 1);
  EXPECT_EQ(e.systems[2].data.unit, runtime::ShardUnitKind::kModel);
  EXPECT_FALSE(e.systems[2].data.prefetch);
  EXPECT_EQ(runtime::to_string(e.systems[1].kind()), "sharded");

  EXPECT_EQ(
      error_of(replace(kValidSpec, systems, "systems: [sync, {name: z, kind: sharded, stage: 4}]")),
      "spec.yaml:9:49: systems.stage: must be <= 3 (got 4)");
  EXPECT_EQ(error_of(replace(kValidSpec, systems,
                             "systems: [sync, {name: z, kind: sharded, unit: block}]")),
            "spec.yaml:9:48: systems.unit: unknown value 'block' (expected one of: layer, model)");
  EXPECT_EQ(error_of(replace(kValidSpec, systems,
                             "systems: [sync, {name: z, kind: sharded, mode: async}]")),
            "spec.yaml:9:42: unknown key 'systems.mode'");
}

TEST(Spec, EmulatedClusterIsReadAndChecked) {
  TempDir dir;
  const std::string text = std::string(kValidSpec) +
                           "cluster: {machines: 2, network: {inter_machine: {bandwidth: 1gbit, "
                           "latency: 100us, loss: 0.1%}}}\n";
  const Experiment e = harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  const auto& cluster = e.points.front().config.cluster;
  EXPECT_EQ(cluster.machines, 2);
  EXPECT_DOUBLE_EQ(*cluster.inter_machine.rate_bits_per_s, 1e9);
  EXPECT_DOUBLE_EQ(cluster.inter_machine.delay_s, 100e-6);
  EXPECT_DOUBLE_EQ(cluster.inter_machine.loss_percent, 0.1);
  EXPECT_EQ(error_of(std::string(kValidSpec) + "cluster: {machines: 3}\n"),
            "spec.yaml:14:21: cluster.machines: 3 machines do not divide the 2 ranks "
            "(run.world_size)");
  EXPECT_EQ(error_of(std::string(kValidSpec) +
                     "cluster: {machines: 2, network: {inter_machine: {bandwidth: 1gb}}}\n"),
            "spec.yaml:14:61: cluster.network.inter_machine.bandwidth: '1gb' is not a rate like "
            "100mbit or 1gbit (bit, kbit, mbit, gbit; or bps, kbps, mbps, gbps)");
}

// The links' probe is on unless the spec turns it off; `plan: auto` on emulated machines needs
// its figures, so the two together are refused where the system is.
TEST(Spec, EmulatedLinksAreProbedUnlessTurnedOff) {
  TempDir dir;
  const std::string cluster = "cluster: {machines: 2, network: {inter_machine: {bandwidth: 1gbit}";
  const auto load = [&](const std::string& text) {
    return harness::load_experiment(dir.write("s.yaml", text).string(), options_with());
  };
  EXPECT_TRUE(
      load(std::string(kValidSpec) + cluster + "}}\n").points.front().config.cluster.probe_links);
  EXPECT_FALSE(load(std::string(kValidSpec) + cluster + ", probe: false}}\n")
                   .points.front()
                   .config.cluster.probe_links);
  EXPECT_EQ(error_of(std::string(kValidSpec) + cluster + ", probe: maybe}}\n"),
            "spec.yaml:14:76: cluster.network.probe: expected true or false, got 'maybe'");
  const std::string pipeline = replace(
      replace(kValidSpec, "systems: [overlap, sync, {name: big, mode: async, bucket_mb: 50}]",
              "systems: [sync, {name: planned, kind: pipeline, plan: auto}]"),
      "sweep:\n  ddp.bucket_mb: [1, 5, 25]\n  model.batch_size: [4, 8]\n", "");
  EXPECT_EQ(error_of(pipeline + cluster + ", probe: false}}\n"),
            "spec.yaml:9:17: systems: planned: plan: auto on emulated machines plans with their "
            "measured links, and cluster.network.probe is false (probe them, or give a plan.json)");
  EXPECT_TRUE(load(pipeline + cluster + "}}\n").points.front().config.cluster.probe_links);
}

TEST(SpecErrors, AWrongValueCausesNoErrorsOfItsOwnStandIn) {
  // An unknown model is one error: the zoo's shape rules are not judged against a stand-in,
  // and a baseline naming a system that failed to read is not reported as unknown.
  const std::string text = R"(name: demo
model: {name: mpl, batch_size: 8, input_shape: [3, 224, 224]}
run: {iterations: 2}
systems: [overlap, {name: mine, mode: asynk}]
baseline: mine
)";
  EXPECT_EQ(error_of(text),
            "spec.yaml:2:15: model.name: unknown value 'mpl' (expected one of: resnet50, "
            "resnet18, mlp); did you mean 'mlp'?\n"
            "spec.yaml:4:39: systems.mode: unknown value 'asynk' (expected one of: overlap, sync, "
            "async, per_tensor); did you mean 'async'?");
}

TEST(SpecErrors, AtMostTwentyAreShownAndTheRestCounted) {
  std::string run_keys;
  for (int i = 0; i < 25; ++i) run_keys += "  bogus" + std::to_string(i) + ": 1\n";
  const std::string text = replace(kValidSpec, "  warmup: 2\n", "  warmup: 2\n" + run_keys);
  const std::string message = error_of(text);
  const auto lines = std::count(message.begin(), message.end(), '\n') + 1;
  EXPECT_EQ(lines, 21) << message;
  EXPECT_EQ(message.substr(0, message.find('\n')), "spec.yaml:9:3: unknown key 'run.bogus0'");
  EXPECT_EQ(message.substr(message.rfind('\n') + 1),
            "spec.yaml: 5 more error(s) not shown (fix these first)");
}

}  // namespace

TEST(SpecErrorList, SortsByPositionCommandLineFirstAndDropsRepeats) {
  harness::SpecErrors errors("spec.yaml");
  EXPECT_NO_THROW(errors.throw_if_any());
  errors.add(InputError("spec.yaml:9:3: late", harness::SourcePosition{9, 3}));
  errors.add(InputError("spec.yaml:2:5: early", harness::SourcePosition{2, 5}));
  errors.add(InputError("--set a=1: from the command line"));
  errors.add(InputError("spec.yaml:2:5: early", harness::SourcePosition{2, 5}));
  errors.collect([] {
    throw InputError("spec.yaml:2:1: earliest", harness::SourcePosition{2, 1});
  });
  EXPECT_EQ(errors.count(), 4u);
  try {
    errors.throw_if_any();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--set a=1: from the command line\nspec.yaml:2:1: earliest\nspec.yaml:2:5: "
                 "early\nspec.yaml:9:3: late");
  }
}

// `kind:` is read in one place for every spec kind, with every kind in its message.
TEST(SpecKind, EveryKindIsReadAndAnUnknownOneListsThemAll) {
  const harness::SpecOrigin origin("spec.yaml");
  EXPECT_EQ(harness::read_spec_kind(YAML::Load("name: a"), origin), harness::SpecKind::kTrain);
  EXPECT_EQ(harness::read_spec_kind(YAML::Load("kind: simulate"), origin),
            harness::SpecKind::kSimulate);
  EXPECT_EQ(harness::read_spec_kind(YAML::Load("kind: profile"), origin),
            harness::SpecKind::kProfile);
  EXPECT_EQ(harness::read_spec_kind(YAML::Load("kind: spmd_search"), origin),
            harness::SpecKind::kSpmdSearch);
  EXPECT_EQ(harness::to_string(harness::SpecKind::kPlan), "plan");
  try {
    harness::read_spec_kind(YAML::Load("name: a\nkind: simulat\n"), origin);
    FAIL() << "no error";
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "spec.yaml:2:7: kind: unknown kind 'simulat' (expected one of: train, plan, "
              "simulate, profile, spmd_search); did you mean 'simulate'?");
  }
}

// One sweep reader and expander for every spec kind: the product in file order, the last axis
// fastest, the values written into the tree for each point.
TEST(Sweep, ExpandsTheProductLastAxisFastest) {
  YAML::Node spec = YAML::Load("a: {x: 0}\nsweep: {a.x: [1, 2], b: [u, v, w]}\n");
  const auto axes =
      harness::read_sweep_axes(spec["sweep"], harness::SpecOrigin("s.yaml"), "sweep", {"a.x", "b"});
  ASSERT_EQ(harness::sweep_size(axes), 6u);
  std::vector<std::string> seen;
  harness::expand_sweep(axes, spec, [&](const harness::SweepPoint& point) {
    seen.push_back(point.id + " " + point.label + " -> " + spec["a"]["x"].Scalar() +
                   spec["b"].Scalar());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"p000 a.x=1, b=u -> 1u", "p001 a.x=1, b=v -> 1v",
                                            "p002 a.x=1, b=w -> 1w", "p003 a.x=2, b=u -> 2u",
                                            "p004 a.x=2, b=v -> 2v", "p005 a.x=2, b=w -> 2w"}));
  const std::string where = "simulate.sweep";
  try {
    harness::read_sweep_axes(YAML::Load("{c: [1]}"), harness::SpecOrigin("s.yaml"), where, {"a.x"});
    FAIL() << "no error";
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:1:2: simulate.sweep: 'c' cannot be swept (sweepable: a.x)");
  }
}

// A sweep is bounded (common/limits.h): 3 axes of 100 values would be 10^6 runs.
TEST(Sweep, MoreThanTheLimitOfPointsIsAnError) {
  std::string values = "[";
  for (int i = 1; i <= 100; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
  values += "]";
  const YAML::Node sweep = YAML::Load("{a: " + values + ", b: " + values + ", c: " + values + "}");
  try {
    harness::read_sweep_axes(sweep, harness::SpecOrigin("s.yaml"), "sweep", {"a", "b", "c"});
    FAIL() << "no error";
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:1:1: sweep: more than 10000 points (the product of its axes)");
  }
}

namespace {

std::string with_optimizer(const std::string& optimizer) {
  return replace(kValidSpec, "run:\n", "optimizer: " + optimizer + "\nrun:\n");
}

harness::OptimizerConfig optimizer_of(const std::string& optimizer) {
  TempDir dir;
  return harness::load_experiment(dir.write("s.yaml", with_optimizer(optimizer)).string(),
                                  options_with())
      .points[0]
      .config.optimizer;
}

TEST(Optimizer, AdamWWithPyTorchsDefaultsOrItsOwn) {
  const harness::OptimizerConfig defaults = optimizer_of("{name: adamw, lr: 0.0003}");
  EXPECT_EQ(defaults.name, "adamw");
  EXPECT_DOUBLE_EQ(defaults.lr, 0.0003);
  EXPECT_DOUBLE_EQ(defaults.beta1, 0.9);
  EXPECT_DOUBLE_EQ(defaults.beta2, 0.999);
  EXPECT_DOUBLE_EQ(defaults.eps, 1e-8);
  EXPECT_DOUBLE_EQ(defaults.weight_decay, 0.01);  // torch.optim.AdamW's
  const harness::OptimizerConfig own =
      optimizer_of("{name: adamw, betas: [0.8, 0.95], eps: 1e-6, weight_decay: 0.1}");
  EXPECT_DOUBLE_EQ(own.beta1, 0.8);
  EXPECT_DOUBLE_EQ(own.beta2, 0.95);
  EXPECT_DOUBLE_EQ(own.eps, 1e-6);
  EXPECT_DOUBLE_EQ(own.weight_decay, 0.1);
  const harness::OptimizerConfig sgd = optimizer_of("{name: sgd, momentum: 0.9}");
  EXPECT_DOUBLE_EQ(sgd.momentum, 0.9);
  EXPECT_DOUBLE_EQ(sgd.weight_decay, 0.0);
}

TEST(Optimizer, BadValuesAndTheOtherOptimizersKeysAreRefused) {
  EXPECT_EQ(
      error_of(with_optimizer("{name: adam}")),
      "spec.yaml:5:19: optimizer.name: unknown value 'adam' (expected one of: sgd, adamw); did you "
      "mean 'adamw'?");
  EXPECT_EQ(error_of(with_optimizer("{name: adamw, betas: [0.9, 1.0]}")),
            "spec.yaml:5:33: optimizer.betas: expected two numbers in [0, 1) (AdamW's beta1, "
            "beta2), got a list");
  EXPECT_EQ(error_of(with_optimizer("{name: adamw, momentum: 0.9}")),
            "spec.yaml:5:36: optimizer.momentum: is not an adamw setting (sgd: momentum; adamw: "
            "betas, eps)");
  EXPECT_EQ(error_of(with_optimizer("{betas: [0.9, 0.99]}")),
            "spec.yaml:5:20: optimizer.betas: is not an sgd setting (sgd: momentum; adamw: betas, "
            "eps)");
  EXPECT_EQ(error_of(with_optimizer("{name: adamw, eps: 0}")),
            "spec.yaml:5:31: optimizer.eps: must be > 0 (got 0)");
  EXPECT_EQ(error_of(with_optimizer("{name: sgd, weight_decay: -1}")),
            "spec.yaml:5:38: optimizer.weight_decay: must be >= 0 (got -1)");
  // A negative number too small for the fixed format is quoted as written, not as 0.
  EXPECT_EQ(error_of(with_optimizer("{name: adamw, eps: -1e-12}")),
            "spec.yaml:5:31: optimizer.eps: must be > 0 (got -1e-12)");
  EXPECT_EQ(error_of(with_optimizer("{name: sgd, weight_decay: -0.0000001}")),
            "spec.yaml:5:38: optimizer.weight_decay: must be >= 0 (got -0.0000001)");
}

}  // namespace

namespace {

// A language model learns the next token: llama's loss is cross-entropy unless a spec says
// otherwise.
TEST(Spec, LlamasLossIsCrossEntropyByDefault) {
  TempDir dir;
  LoadOptions options = options_with();
  options.known_models.push_back("llama");
  const std::string llama = replace(kValidSpec, "  name: mlp", "  name: llama");
  const Experiment e = harness::load_experiment(dir.write("s.yaml", llama).string(), options);
  EXPECT_EQ(e.points[0].config.model.loss, "cross_entropy");
  EXPECT_EQ(e.points[0].config.model.input_shape, (std::vector<long long>{128}));
  const Experiment mse = harness::load_experiment(
      dir.write("m.yaml", replace(llama, "  batch_size: 8", "  batch_size: 8\n  loss: mse"))
          .string(),
      options);
  EXPECT_EQ(mse.points[0].config.model.loss, "mse");
  // Its heads, key/value heads and vocabulary, and the rank program's flag that carries them.
  const Experiment sized = harness::load_experiment(
      dir.write("h.yaml", replace(llama, "  batch_size: 8",
                                  "  batch_size: 8\n  heads: 4\n  kv_heads: 2\n  vocab: 1000"))
          .string(),
      options);
  const harness::ModelConfig& model = sized.points[0].config.model;
  EXPECT_EQ(model.decoder, (runtime::DecoderShape{4, 2, 1000}));
  const auto flags = harness::rank_model_flags(model);
  EXPECT_EQ(std::vector<std::string>(flags.end() - 2, flags.end()),
            (std::vector<std::string>{"--decoder", "4,2,1000"}));
  EXPECT_EQ(harness_test::spec_load_error(
                replace(llama, "  batch_size: 8", "  batch_size: 8\n  kv_heads: 3"), options),
            "spec.yaml:3:3: model: llama kv_heads must divide the heads (8)");
  // A width below one head's is refused by the width's rule (it divided by zero heads before).
  EXPECT_EQ(harness_test::spec_load_error(
                replace(llama, "  batch_size: 8", "  batch_size: 8\n  width: 32"), options),
            "spec.yaml:3:3: model: llama width must be a multiple of 64 (heads of 64)");
  EXPECT_EQ(error_of(replace(kValidSpec, "  batch_size: 8", "  batch_size: 8\n  vocab: 100")),
            "spec.yaml:3:3: model: mlp has no heads, kv_heads or vocab (they are llama's)");
}

}  // namespace

// Lists of numbers (the search spec's noise levels and scales) are read entry by entry, each
// refused at its own place, as lists of integers are.
TEST(MapReader, ListsOfNumbersAreRefusedAtTheEntry) {
  const harness::SpecOrigin origin("spec.yaml");
  const YAML::Node node = YAML::Load("a: [0.5, 1.5]\nb: [1, x]\nc: [0, -1]\nd: []\n");
  harness::MapReader reader(node, "m", origin);
  EXPECT_EQ(reader.get_double_list("a", std::nullopt, 0.0), (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(reader.get_double_list("e", std::vector<double>{2}, 0.0), std::vector<double>{2});
  const auto message = [&](const std::string& key, double exclusive_min) {
    try {
      reader.get_double_list(key, std::nullopt, exclusive_min);
    } catch (const harness::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("b", 0.0), "spec.yaml:2:8: m.b: expected a number, got 'x'");
  EXPECT_EQ(message("c", harness::MapReader::kZeroOrMore),
            "spec.yaml:3:8: m.c: every entry must be >= 0 (got -1)");
  EXPECT_EQ(message("c", 0.0), "spec.yaml:3:5: m.c: every entry must be > 0 (got 0)");
  EXPECT_EQ(message("d", 0.0),
            "spec.yaml:4:4: m.d: expected a non-empty list of numbers, got an empty list");
}
