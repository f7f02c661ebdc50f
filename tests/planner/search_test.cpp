// Sweeps: determinism across thread counts, batch-size parsing, and the report formats.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/input_error.h"
#include "common/json_file.h"
#include "planner/cluster/topology.h"
#include "planner/report/plan_report.h"
#include "planner/search/batch_range.h"
#include "planner/search/planner.h"
#include "tests/planner/planner_test_data.h"

namespace harness::planner {
namespace {

PlannerOptions three_layer_options(PlannerMode mode, int threads) {
  PlannerOptions o;
  o.mode = mode;
  o.setup.profile_batch_size = 4;
  o.devices = Devices({2, 4});
  o.threads = threads;
  return o;
}

TEST(BatchSizes, PublishedSweepAndLists) {
  const auto sweep = parse_batch_sizes("32:4096:64", "--gbs");
  ASSERT_EQ(sweep.size(), 65u);
  EXPECT_EQ(sweep[0], 32);
  EXPECT_EQ(sweep[1], 64);
  EXPECT_EQ(sweep[2], 128);
  EXPECT_EQ(sweep.back(), 4096);
  EXPECT_EQ(parse_batch_sizes("128,256", "x"), (std::vector<int>{128, 256}));
  EXPECT_EQ(parse_batch_sizes("64:256:64", "x"), (std::vector<int>{64, 128, 192, 256}));
  try {
    parse_batch_sizes("32:16:8", "--gbs");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--gbs: end below start in batch sizes '32:16:8' (expected start:end:step or a "
              "comma-separated list)");
  }
  EXPECT_THROW(parse_batch_sizes("32:x:8", "x"), InputError);
  EXPECT_THROW(parse_batch_sizes("0", "x"), InputError);
}

TEST(Sweep, ThreeLayerCompatTableRow) {
  const ModelProfile profile = import_profile(kData + "/three_layers.txt");
  const SweepResult r = plan_sweep(profile, three_layer_options(PlannerMode::kCompat, 1), {16});
  std::ostringstream table;
  write_table(table, r);
  // DP figures as in estimates_test; the best hybrid is a bipartition evaluated by the
  // latency model -- checked against the candidate's own timing.
  ASSERT_TRUE(r.batches[0].plan);
  EXPECT_NEAR(r.batches[0].best_hybrid, r.batches[0].timing.speedup, 0);
  EXPECT_EQ(table.str().substr(0, table.str().find('\n', 60)),
            "gbs, dp_no_overlap, dp_p3, dp_overlap, best_hybrid | plan\n16, 2.6230, 3.2000, "
            "3.0769, " +
                format_speedup(r.batches[0].best_hybrid) + " | " +
                describe_stages(*r.batches[0].plan));
  // Every candidate was scored; none beats the chosen one.
  EXPECT_GT(r.batches[0].candidates_considered, 3);
}

TEST(Sweep, ResultsDoNotDependOnThreadCount) {
  const ModelProfile profile = import_profile(kData + "/diamond_crlf.txt");
  for (PlannerMode mode : {PlannerMode::kCompat, PlannerMode::kDapple}) {
    PlannerOptions one = three_layer_options(mode, 1);
    one.setup.profile_batch_size = 1;
    one.devices = Devices({2, 4, 6, 8});
    PlannerOptions three = one;
    three.threads = 3;
    const auto batches = parse_batch_sizes("1:64:4", "x");
    const auto a = plan_json(profile, one, plan_sweep(profile, one, batches));
    const auto b = plan_json(profile, three, plan_sweep(profile, three, batches));
    EXPECT_EQ(harness::json_text(a), harness::json_text(b)) << to_string(mode);
  }
}

TEST(Sweep, PlanJsonDescribesEveryStage) {
  const ModelProfile profile = import_profile(kData + "/three_layers.txt");
  const PlannerOptions options = three_layer_options(PlannerMode::kDapple, 1);
  const auto doc = plan_json(profile, options, plan_sweep(profile, options, {16, 32}));
  EXPECT_EQ(doc["schema"], "harness.plan/1");
  EXPECT_EQ(doc["states"], 3);
  ASSERT_EQ(doc["results"].size(), 2u);
  const auto& plan = doc["results"][1]["plan"];
  ASSERT_TRUE(plan.is_object());
  int gpus = 0, first = 0;
  for (const auto& stage : plan["stages"]) {
    EXPECT_EQ(stage["first_state"], first);
    first = stage["last_state"].get<int>() + 1;
    EXPECT_EQ(stage["replicas"], stage["gpus"].size());
    EXPECT_FALSE(stage["layers"].empty());
    EXPECT_GT(stage["memory_bytes"].get<double>(), 0.0);
    gpus += stage["replicas"].get<int>();
  }
  EXPECT_EQ(first, 3);  // stages cover every state once
  EXPECT_LE(gpus, 4);
  // M = 32 / copies / 4 micro-batches of copies x 4 samples cover the global batch.
  EXPECT_EQ(plan["micro_batch_count"].get<int>(), 32 / plan["pipeline_copies"].get<int>() / 4);
  EXPECT_EQ(plan["micro_batch_count"].get<int>() * plan["micro_batch_size"].get<int>(), 32);
}

TEST(Topology, DefaultFileIsThePublishedV100Cluster) {
  const Topology t = load_topology(std::string(PLANNER_TOPOLOGY_DIR) + "/v100_8x2.yaml");
  const Topology published = Topology::published_constants();
  EXPECT_EQ(t.gpu_memory_bytes, published.gpu_memory_bytes);
  EXPECT_EQ(t.intra_machine_bandwidth, published.intra_machine_bandwidth);
  EXPECT_EQ(t.inter_machine_p2p_bandwidth, published.inter_machine_p2p_bandwidth);
  EXPECT_EQ(t.inter_machine_collective_bandwidth, published.inter_machine_collective_bandwidth);
  EXPECT_EQ(t.gpus_per_machine, (std::vector<int>{8, 8}));
}

// A cluster is bounded (common/limits.h: 4096 GPUs): two machines of 10^8 GPUs hung.
TEST(Topology, MoreThanTheLimitOfGpusIsAnError) {
  const std::string path = ::testing::TempDir() + "/huge_topology.yaml";
  {
    std::ofstream out(path);
    out << "gpu_memory_bytes: 16e9\nbandwidth: {intra_machine: 1e11, inter_machine_p2p: 1e9, "
           "inter_machine_collective: 1e9}\n"
           "machines: [100000000, 100000000]\n";
  }
  try {
    load_topology(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3:12: 'machines' add up to more than 4096 GPUs");
  }
}

TEST(Topology, AnInMachineCollectiveBandwidthIsOptional) {
  const std::string path = ::testing::TempDir() + "/measured_topology.yaml";
  {
    std::ofstream out(path);
    out << "gpu_memory_bytes: 8e9\nbandwidth: {intra_machine: 2e9, inter_machine_p2p: 1.2e7, "
           "inter_machine_collective: 1.1e7, intra_machine_collective: 9.2e8}\n"
           "machines: [2, 2]\n";
  }
  EXPECT_DOUBLE_EQ(load_topology(path).intra_machine_collective_bandwidth, 9.2e8);
  // The published cluster has none: its in-machine all-reduce stays the published formula.
  EXPECT_EQ(load_topology(std::string(PLANNER_TOPOLOGY_DIR) + "/v100_8x2.yaml")
                .intra_machine_collective_bandwidth,
            0.0);
  {
    std::ofstream out(path);
    out << "gpu_memory_bytes: 8e9\nbandwidth: {intra_machine: 2e9, inter_machine_p2p: 1.2e7, "
           "inter_machine_collective: 1.1e7, intra_machine_collective: 0}\n";
  }
  try {
    load_topology(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'intra_machine_collective' must be"), std::string::npos)
        << e.what();
  }
}

TEST(Topology, ErrorsCarryLineAndColumn) {
  const std::string path = ::testing::TempDir() + "/bad_topology.yaml";
  {
    std::ofstream out(path);
    out << "gpu_memory_bytes: 16e9\nbandwidth:\n  intra_machine: fast\n";
  }
  try {
    load_topology(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3:18: 'intra_machine' must be a number, got 'fast'");
  }
  {
    std::ofstream out(path);
    out << "gpu_memory_bytes: 16e9\nbandwith: {}\n";
  }
  try {
    load_topology(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":2:1: unknown key 'bandwith' (expected name, gpu_memory_bytes, bandwidth, "
                  "machines)");
  }
}

}  // namespace
}  // namespace harness::planner
