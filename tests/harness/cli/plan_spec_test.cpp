// A `kind: plan` spec read by the spec's own reader (harness/spec/yaml_reader.h): what it sets
// comes back in the runs, a model entry inherits what it leaves out, and every error of the map
// is reported at once, each at its key's file:line:column.
#include <gtest/gtest.h>

#include "common/input_error.h"
#include "harness/cli/plan_command.h"
#include "harness/spec/spec_errors.h"
#include "tests/test_util.h"

namespace {

using harness_test::TempDir;

const std::string kThreeLayers = std::string(HARNESS_TEST_DATA) + "/planner/three_layers.txt";

harness::PlanSpecRuns read_plan(const TempDir& dir, const std::string& plan) {
  const std::string path = dir.write("plan.yaml", "kind: plan\nname: p\nplan:\n" + plan).string();
  harness::SpecErrors errors(path);
  return harness::read_plan_spec(path, YAML::LoadFile(path), errors);
}

std::string plan_errors(const TempDir& dir, const std::string& plan) {
  return harness_test::thrown_message<harness::InputError>([&] { read_plan(dir, plan); });
}

TEST(PlanSpec, ModelsInheritThePlansKeysAndLayoutsAndModesComeBack) {
  TempDir dir;
  const harness::PlanSpecRuns runs =
      read_plan(dir,
                "  pbs: 2\n  gbs: [8, 16]\n  threads: 3\n  explain: true\n"
                "  devices: {one: \"4\", two: [2, 4]}\n  mode: [compat, dapple]\n"
                "  noise: {compute: 10, seeds: 3}\n"
                "  models:\n    - {name: a, profile: " +
                    kThreeLayers +
                    "}\n"
                    "    - {name: b, profile: " +
                    kThreeLayers + ", pbs: 4, micro_batch: 2}\n");
  ASSERT_EQ(runs.models.size(), 2u);
  EXPECT_EQ(runs.models[0].request.profile_batch, 2);  // the plan's
  EXPECT_EQ(runs.models[0].request.global_batches, "8,16");
  EXPECT_EQ(runs.models[0].request.threads, 3);
  EXPECT_TRUE(runs.models[0].request.explain);
  EXPECT_EQ(runs.models[1].request.profile_batch, 4);  // its own
  EXPECT_EQ(runs.models[1].request.micro_batch, 2);
  ASSERT_EQ(runs.models[1].request.noise_studies.size(), 1u);
  EXPECT_DOUBLE_EQ(runs.models[1].request.noise_studies[0].compute_fraction, 0.1);
  EXPECT_EQ(runs.models[1].request.noise_studies[0].seeds, 3);
  EXPECT_EQ(runs.layouts,
            (std::vector<std::pair<std::string, std::string>>{{"one", "4"}, {"two", "2,4"}}));
  EXPECT_EQ(runs.modes, (std::vector<std::string>{"compat", "dapple"}));
}

TEST(PlanSpec, EveryErrorOfTheMapAtItsKey) {
  TempDir dir;
  const std::string f = (dir.path() / "plan.yaml").string();
  EXPECT_EQ(plan_errors(dir, "  profile: " + kThreeLayers +
                                 "\n  pbs: 0\n  mode: [dapple, foo]\n  noise: {compute: 150}\n"
                                 "  thread: 2\n"),
            f + ":5:8: plan.pbs: must be >= 1 (got 0)\n" + f +
                ":6:18: plan.mode: expected compat or dapple, got 'foo'\n" + f +
                ":7:20: plan.noise.compute: must be a percentage below 100\n" + f +
                ":8:3: unknown key 'plan.thread' (did you mean 'threads'?)");
  EXPECT_EQ(plan_errors(dir, "  models:\n    - {name: a, pbs: 1}\n"),
            f + ":4:3: model 'a' needs 'profile' and 'pbs'");
  EXPECT_EQ(plan_errors(dir, "  gbs: 32\n"),
            f + ":4:3: 'plan' needs 'profile' and 'pbs' (or 'models')");
}

}  // namespace
