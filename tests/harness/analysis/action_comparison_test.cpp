// harness actions: a hand-made 2-rank ZB-H1 run (pipeline_rank<r>.json over two repeats) and two
// simulations of it (trace_rank<r>.json and rank<r>.csv), split into the same parts on both
// sides; every expected figure is worked out in the comments.
#include <gtest/gtest.h>

#include <string>

#include "common/input_error.h"
#include "harness/analysis/action_comparison.h"
#include "tests/test_util.h"

namespace action_comparison_test {

namespace fs = std::filesystem;
using harness::ActionPart;
using harness_test::TempDir;

// One measured iteration as a pipeline rank writes it.
std::string iteration(double total, double forward, double backward, double weight, double send,
                      double allreduce, double step, double recv_wait) {
  return "{\"iteration_ms\": " + std::to_string(total) +
         ", \"forward_ms\": " + std::to_string(forward) +
         ", \"backward_ms\": " + std::to_string(backward) +
         ", \"backward_weight_ms\": " + std::to_string(weight) +
         ", \"send_ms\": " + std::to_string(send) +
         ", \"allreduce_ms\": " + std::to_string(allreduce) +
         ", \"step_ms\": " + std::to_string(step) +
         ", \"recv_wait_ms\": " + std::to_string(recv_wait) + "}";
}

std::string pipeline_rank(int rank, const std::string& order, const std::string& iterations) {
  return "{\"rank\": " + std::to_string(rank) + ", \"world_size\": 2, \"stages_here\": [" +
         std::to_string(rank) + "], \"schedule\": \"zb_h1\", \"schedule_order\": \"" + order +
         "\", \"iterations\": [" + iterations + "]}";
}

const char* kOrder0 = "0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0I0 0W0 0RECV_B1 0I1 0W1";
const char* kOrder1 = "1RECV_F0 1F0 1I0 1SEND_B0 1RECV_F1 1F1 1I1 1SEND_B1 1W0 1W1";

// Rank 0's iterations (ms): total, F, B+I+W, W, send, all-reduce, step, receive waits. Per
// iteration B-or-I = backward - W: 5, 7, 6; waiting = total - the rest: 20-4-5-3-1-0-2 = 5,
// 24-6-7-3-1-0-2 = 5, 22-5-6-3-2-0-2 = 4. Medians over the three: F 5, I 6, W 3, send 1,
// step 2, waiting 5, iteration 22, receives 3.
fs::path measured_run(const TempDir& dir) {
  const fs::path run = dir.path() / "real";
  dir.write("real/raw/p000/zb_h1/rep0/pipeline_rank0.json",
            pipeline_rank(
                0, kOrder0,
                iteration(20, 4, 8, 3, 1, 0, 2, 3) + "," + iteration(24, 6, 10, 3, 1, 0, 2, 4)));
  dir.write("real/raw/p000/zb_h1/rep1/pipeline_rank0.json",
            pipeline_rank(0, kOrder0, iteration(22, 5, 9, 3, 2, 0, 2, 3)));
  // Rank 1: I = 10 - 6 = 4, waiting = 22-4-4-6-1-0.5-2 = 4.5 in every iteration.
  const std::string rank1 = iteration(22, 4, 10, 6, 1, 0.5, 2, 2);
  dir.write("real/raw/p000/zb_h1/rep0/pipeline_rank1.json",
            pipeline_rank(1, kOrder1, rank1 + "," + rank1));
  dir.write("real/raw/p000/zb_h1/rep1/pipeline_rank1.json", pipeline_rank(1, kOrder1, rank1));
  return run;
}

std::string event(const std::string& name, const std::string& category, int tid, double ts,
                  double dur) {
  return "{\"ph\": \"X\", \"name\": \"" + name + "\", \"cat\": \"" + category +
         "\", \"pid\": 0, \"tid\": " + std::to_string(tid) + ", \"ts\": " + std::to_string(ts) +
         ", \"dur\": " + std::to_string(dur) + "}";
}

// A simulation: rank 0's compute lane F 2 + 2.5, I 2 + 2, W 1 + 1, a send call 0.3, a bucket
// copy 0.5 and the all-reduce 1.0 (the gradient sum, 1.5), step 2: 14.3 ms busy. Its transfers
// (send/recv on their own threads) are the link's time, not the rank's. Rank 1: F 4, B 4,
// step 2. Iterations (rank<r>.csv medians): rank 0 `iteration0`, rank 1 12.
fs::path simulated_run(const TempDir& dir, const std::string& name, double iteration0) {
  const std::string raw = name + "/raw/p000/zb_h1/rep0/";
  const std::string rank0 = event("forward mb0", "forward", 0, 0, 2000) + "," +
                            event("forward mb1", "forward", 0, 2000, 2500) + "," +
                            event("send call mb0", "send", 0, 4500, 300) + "," +
                            event("send mb0", "send", 1, 4800, 2700) + "," +
                            event("recv mb0", "recv", 2, 6000, 500) + "," +
                            event("backward mb0", "backward", 0, 6000, 2000) + "," +
                            event("backward_weight mb0", "backward_weight", 0, 8000, 1000) + "," +
                            event("backward mb1", "backward", 0, 9000, 2000) + "," +
                            event("backward_weight mb1", "backward_weight", 0, 11000, 1000) + "," +
                            event("bucket copy 0", "backward", 0, 12000, 500) + "," +
                            event("allreduce stage 0", "allreduce", 3, 12500, 1000) + "," +
                            event("step", "step", 0, 13500, 2000);
  dir.write(raw + "trace_rank0.json", "{\"traceEvents\": [" + rank0 + "]}");
  dir.write(raw + "trace_rank1.json", "{\"traceEvents\": [" +
                                          event("forward mb0", "forward", 0, 0, 4000) + "," +
                                          event("backward mb0", "backward", 0, 4000, 4000) + "," +
                                          event("step", "step", 0, 8000, 2000) + "]}");
  const std::string header = "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n";
  dir.write(raw + "rank0.csv", header + "0,1,1,1," + std::to_string(iteration0) + "\n1,1,1,1," +
                                   std::to_string(iteration0) + "\n");
  dir.write(raw + "rank1.csv", header + "0,1,1,1,12\n");
  return dir.path() / name;
}

TEST(ActionComparison, SplitsBothSidesIntoTheSameParts) {
  TempDir dir;
  // A repeat that failed, its figures far off, is left out as the pipeline table leaves it.
  for (int r = 0; r < 2; ++r) {
    dir.write(
        "real/raw/p000/zb_h1/rep2/pipeline_rank" + std::to_string(r) + ".json",
        pipeline_rank(r, r == 0 ? kOrder0 : kOrder1, iteration(900, 400, 400, 3, 1, 0, 2, 3)));
  }
  dir.write("real/raw/p000/zb_h1/rep2/status.json", R"({"status": "failed"})");
  // Two simulations, rank 0's iteration 18 and 20 ms: mean 19, its waiting 3.7 and 5.7, mean 4.7.
  const auto comparisons = harness::compare_actions(
      measured_run(dir), {simulated_run(dir, "sim-a", 18), simulated_run(dir, "sim-b", 20)}, "");
  ASSERT_EQ(comparisons.size(), 1u);
  const harness::ActionComparison& c = comparisons[0];
  EXPECT_EQ(c.point, "p000");
  EXPECT_EQ(c.system, "zb_h1");
  EXPECT_EQ(c.schedule, "zb_h1");
  EXPECT_EQ(c.measured_iterations, 3u);
  EXPECT_EQ(c.simulations, 2u);
  ASSERT_EQ(c.ranks.size(), 2u);
  const harness::RankActions& r0 = c.ranks[0];
  EXPECT_EQ(r0.forwards, 2);
  EXPECT_EQ(r0.backwards, 2);
  EXPECT_EQ(r0.weights, 2);
  EXPECT_NEAR(r0.measured[ActionPart::kForward], 5, 1e-9);
  EXPECT_NEAR(r0.measured[ActionPart::kBackward], 6, 1e-9);
  EXPECT_NEAR(r0.measured[ActionPart::kWeight], 3, 1e-9);
  EXPECT_NEAR(r0.measured[ActionPart::kSend], 1, 1e-9);
  EXPECT_NEAR(r0.measured[ActionPart::kWaiting], 5, 1e-9);
  EXPECT_NEAR(r0.measured.iteration_ms, 22, 1e-9);
  EXPECT_NEAR(*r0.measured.recv_wait_ms, 3, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kForward], 4.5, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kBackward], 4, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kWeight], 2, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kSend], 0.3, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kGradientSum], 1.5, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kStep], 2, 1e-9);
  EXPECT_NEAR(r0.simulated[ActionPart::kWaiting], 4.7, 1e-9);
  EXPECT_NEAR(r0.simulated.iteration_ms, 19, 1e-9);
  EXPECT_FALSE(r0.simulated.recv_wait_ms.has_value());
  const harness::RankActions& r1 = c.ranks[1];
  EXPECT_NEAR(r1.measured[ActionPart::kBackward], 4, 1e-9);
  EXPECT_NEAR(r1.measured[ActionPart::kWaiting], 4.5, 1e-9);
  EXPECT_NEAR(r1.simulated[ActionPart::kWaiting], 2, 1e-9);
  // The miss, mean over ranks: F (4.5 - 5 + 4 - 4) / 2, iteration (19 - 22 + 12 - 22) / 2.
  EXPECT_NEAR(c.miss()[ActionPart::kForward], -0.25, 1e-9);
  EXPECT_NEAR(c.miss().iteration_ms, -6.5, 1e-9);
  EXPECT_NEAR(c.measured_iteration_ms(), 22, 1e-9);
  EXPECT_NEAR(c.simulated_iteration_ms(), 15.5, 1e-9);
}

TEST(ActionComparison, MarkdownAndJsonCarryThePerActionFigures) {
  TempDir dir;
  const auto comparisons = harness::compare_actions(
      measured_run(dir), {simulated_run(dir, "sim-a", 18), simulated_run(dir, "sim-b", 20)}, "");
  const std::string md = harness::actions_markdown(comparisons);
  EXPECT_NE(md.find("### p000 / zb_h1 (zb_h1): measured 22.0 ms, simulated 15.5 ms (-29.5%)"),
            std::string::npos)
      << md;
  // Per action: F 5 / 2 and 4.5 / 2, I 6 / 2 and 4 / 2, W 3 / 2 and 2 / 2.
  EXPECT_NE(md.find("| 0 | 0 | 2/2/2 | 2.50 / 2.25 | 3.00 / 2.00 | 1.50 / 1.00 | 1.0 / 0.3 | "
                    "0.0 / 1.5 | 2.0 / 2.0 | 5.0 (3.0) / 4.7 | 22.0 / 19.0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("forward -0.2, "), std::string::npos) << md;
  EXPECT_NE(md.find("; iteration -6.5."), std::string::npos) << md;
  const nlohmann::json doc = harness::actions_json(comparisons);
  const nlohmann::json& run = doc.at("runs").at(0);
  EXPECT_EQ(run.at("ranks").at(1).at("actions").at("weight"), 2);
  EXPECT_NEAR(run.at("ranks").at(0).at("simulated_ms").at("gradient_sum").get<double>(), 1.5, 1e-9);
  EXPECT_NEAR(run.at("miss_ms").at("iteration").get<double>(), -6.5, 1e-9);
}

// The message of the InputError compare_actions throws.
std::string error_of(const fs::path& measured, const std::vector<fs::path>& simulated,
                     const std::string& system = "") {
  try {
    harness::compare_actions(measured, simulated, system);
  } catch (const harness::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ActionComparison, RefusesWhatItCannotCompare) {
  TempDir dir;
  const fs::path real = measured_run(dir);
  const fs::path sim = simulated_run(dir, "sim-a", 18);
  EXPECT_EQ(error_of(dir.path() / "nothing", {sim}),
            (dir.path() / "nothing").string() + ": not a results folder (no raw/ in it)");
  EXPECT_EQ(error_of(real, {}), "no simulated results folder to compare with");
  EXPECT_EQ(error_of(real, {sim}, "ddp"),
            real.string() +
                ": no pipeline run of system ddp (no raw/<point>/<system>/rep<k>/"
                "pipeline_rank0.json)");
  dir.write("other/raw/p000/gpipe/rep0/rank0.csv", "iteration,iteration_ms\n0,1\n");
  EXPECT_EQ(error_of(real, {dir.path() / "other"}),
            (dir.path() / "other").string() + ": no simulation of p000 / zb_h1 (no " +
                (dir.path() / "other/raw/p000/zb_h1/rep0").string() + ")");
  fs::remove(sim / "raw/p000/zb_h1/rep0/trace_rank1.json");
  EXPECT_EQ(error_of(real, {sim}),
            (sim / "raw/p000/zb_h1/rep0").string() +
                ": no trace of rank 1 (simulate with simulate.run.trace_ranks at least the world "
                "size)");
  dir.write("real/raw/p000/zb_h1/rep0/pipeline_rank1.json",
            pipeline_rank(1, "1F0 1X0", iteration(22, 4, 10, 6, 1, 0.5, 2, 2)));
  const std::string bad_order = error_of(real, {sim});
  EXPECT_EQ(bad_order.rfind((real / "raw/p000/zb_h1/rep0/pipeline_rank1.json").string() +
                                ": its schedule_order: ",
                            0),
            0u)
      << bad_order;
}

}  // namespace action_comparison_test
