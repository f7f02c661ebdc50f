// The duration a study is expected to take: a run measured before by this very spec counts its
// own time, one never measured its model FLOPs at the machine's GEMM peak plus a launch, and an
// external system nothing.
#include "harness/study/duration_estimate.h"

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "tests/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using harness_test::TempDir;
using nlohmann::json;

struct PlannedStudy {
  Experiment experiment;
  explicit PlannedStudy(const fs::path& output) {
    experiment.name = "study";
    experiment.output = output.string();
    experiment.resolved = YAML::Load("name: study\nrun: {iterations: 4}\n");
    Point point;
    point.id = "p000";
    point.label = "default";
    point.config.model.batch_size = 2;
    point.config.run.world_size = 2;
    point.config.run.warmup = 1;
    point.config.run.iterations = 4;
    experiment.points.push_back(point);
    for (const char* name : {"a", "b"}) {
      SystemConfig system;
      system.name = name;
      experiment.systems.push_back(system);
    }
  }
};

// 10 GFLOP/s for one core, 20 for both; a model of 1 GFLOP forward per sample.
EstimateInputs gemm_machine_inputs() {
  EstimateInputs inputs;
  inputs.machine = {{"gemm_fp32", {{"gflops_one_core", 10.0}, {"gflops_all_cores", 20.0}}}};
  inputs.layer_flops = [](const ModelConfig&) { return std::vector<double>{1e9}; };
  return inputs;
}

TEST(DurationEstimate, AnUnmeasuredRunIsBoundedByItsModelFlops) {
  TempDir dir;
  PlannedStudy study(dir.path());
  // A rank: 3 x 1 GFLOP x 2 samples = 6 GFLOP a iteration, 0.6 s at one core's 10 GFLOP/s (both
  // ranks' 12 GFLOP at 20 GFLOP/s take as long); 5 iterations and a launch of 0.5 s: 3.5 s.
  const DurationEstimate estimate =
      estimate_duration(plan_runs(study.experiment), gemm_machine_inputs());
  EXPECT_EQ(estimate.runs, 2u);
  EXPECT_EQ(estimate.from_flops, 2u);
  EXPECT_NEAR(estimate.seconds, 7.0, 1e-9);
  EXPECT_TRUE(estimate.lower_bound());
  EXPECT_EQ(describe_estimate(estimate),
            "expected duration: at least 7s (2 of 2 runs bounded by their model FLOPs at this "
            "machine's GEMM peak)");
  // Ranks that share the cores: 4 ranks of 6 GFLOP on 20 GFLOP/s take 1.2 s an iteration.
  study.experiment.points[0].config.run.world_size = 4;
  EXPECT_NEAR(estimate_duration(plan_runs(study.experiment), gemm_machine_inputs()).seconds,
              2 * (0.5 + 5 * 1.2), 1e-9);
}

TEST(DurationEstimate, ARunOfThisSpecMeasuredBeforeCountsItsOwnTime) {
  TempDir dir;
  PlannedStudy study(dir.path());
  const fs::path older = dir.path() / "study" / "20261201T000000Z";
  const fs::path newer = dir.path() / "study" / "20261202T000000Z";
  const fs::path other = dir.path() / "study" / "20261203T000000Z";
  YAML::Emitter spec;
  spec << study.experiment.resolved;
  write_file_atomic(older / "spec.yaml", std::string(spec.c_str()) + "\n");
  write_file_atomic(newer / "spec.yaml", std::string(spec.c_str()) + "\n");
  write_file_atomic(other / "spec.yaml", "name: study\nrun: {iterations: 9}\n");  // another spec
  write_file_atomic(newer / "raw/p000/a/rep0/status.json",
                    R"({"status": "complete", "elapsed_s": 2.5})");
  write_file_atomic(newer / "raw/p000/b/rep0/status.json",
                    R"({"status": "failed", "elapsed_s": 0.1})");
  EXPECT_EQ(previous_results_of(study.experiment), newer);
  EstimateInputs inputs = gemm_machine_inputs();
  inputs.previous = newer;
  const DurationEstimate estimate = estimate_duration(plan_runs(study.experiment), inputs);
  EXPECT_EQ(estimate.from_previous, 1u);  // a's; b failed there, and is bounded by its FLOPs
  EXPECT_EQ(estimate.from_flops, 1u);
  EXPECT_NEAR(estimate.seconds, 2.5 + 3.5, 1e-9);
  EXPECT_EQ(describe_estimate(estimate),
            "expected duration: at least 6s (1 of 2 runs as long as in " + newer.string() +
                "; 1 of 2 runs bounded by their model FLOPs at this machine's GEMM peak)");
  // estimate_study finds the folder itself.
  const EstimateInputs machine = gemm_machine_inputs();
  const DurationEstimate found = estimate_study(study.experiment, plan_runs(study.experiment),
                                                machine.machine, machine.layer_flops);
  EXPECT_EQ(found.previous, newer);
  EXPECT_NEAR(found.seconds, 6.0, 1e-9);
}

TEST(DurationEstimate, AnExternalSystemOrNoMachineFiguresIsNotEstimated) {
  TempDir dir;
  PlannedStudy study(dir.path());
  study.experiment.systems[1].external = harness::ExternalSystem{};
  const DurationEstimate estimate =
      estimate_duration(plan_runs(study.experiment), gemm_machine_inputs());
  EXPECT_EQ(estimate.from_flops, 1u);
  EXPECT_EQ(estimate.unknown, 1u);
  EXPECT_EQ(describe_estimate(estimate),
            "expected duration: at least 4s (1 of 2 runs bounded by their model FLOPs at this "
            "machine's GEMM peak; 1 of 2 runs not estimated)");
  EXPECT_EQ(describe_estimate(estimate_duration(plan_runs(study.experiment), {})), "");
  EXPECT_TRUE(previous_results_of(study.experiment).empty());
}

}  // namespace
}  // namespace harness
