// The pipeline runtime over real Gloo (one thread per rank, a shared c10d HashStore):
// for 2- and 3-stage plans, with and without replicated stages, every schedule (GPipe, DAPPLE,
// interleaved 1F1B and ZB-V at two stages per rank, ZB-H1 with its backward split into I and
// W) at 2 and 4 pipeline ranks and several micro-batch counts, the loss and the parameters after
// one SGD step equal single-process training on the same global batch (relative 1e-5, float64,
// models without BatchNorm). Then the memory claims: DAPPLE's stashed activations stay bounded
// by the stage count while GPipe's grow with the number of micro-batches, and each schedule's
// measured in-flight count is its action list's.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <map>
#include <thread>

#include "baselines/ddp/gradient_reducer.h"
#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/precision.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/pipeline_executor.h"
#include "tests/runtime/double_default.h"

namespace {

using runtime::PipelineLayout;
using runtime::PipelineSchedule;

constexpr double kLr = 0.05;
constexpr int64_t kGlobalBatch = 12;

struct ModelCase {
  std::string name;
  runtime::ModelOptions options;
};

ModelCase mlp() { return {"mlp", {{16}, 4, /*depth=*/4, /*width=*/32}}; }     // 10 layers
ModelCase bert() { return {"bert", {{6}, 3, /*depth=*/3, /*width=*/64}}; }    // 6 layers
ModelCase llama() { return {"llama", {{6}, 0, /*depth=*/2, /*width=*/64}}; }  // 5 layers

struct Case {
  std::string label;
  ModelCase model;
  PipelineLayout layout;
  int world;
  runtime::Precision precision = runtime::Precision::kFp32;
  double auxiliary_weight = 0.0;  // mixture-of-experts models' balancing loss
};

struct RankResult {
  double loss = 0;
  bool last_stage = false;
  std::map<std::string, torch::Tensor> parameters;  // name -> after the step
  runtime::PipelineIterationStats stats;
  std::string error;
};

struct Reference {
  double loss = 0;
  std::map<std::string, torch::Tensor> parameters;
};

std::shared_ptr<runtime::ZooModel> build(const ModelCase& model) {
  torch::manual_seed(99);
  return runtime::make_model(model.name, model.options);
}

runtime::SyntheticBatch data_for(runtime::ZooModel& model, const ModelCase& c,
                                 int64_t global_batch = kGlobalBatch) {
  torch::manual_seed(7);
  return runtime::make_synthetic_batch(model, c.options, global_batch, "mse");
}

Reference single_process(const ModelCase& c,
                         runtime::Precision precision = runtime::Precision::kFp32,
                         double auxiliary_weight = 0.0) {
  auto model = build(c);
  // The data from a model routing in one group: making it runs one sample through the model.
  ModelCase ungrouped = c;
  ungrouped.options.moe_groups = 1;
  const auto batch = data_for(*build(ungrouped), c);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(kLr));
  sgd.zero_grad();
  torch::Tensor loss;
  {
    const runtime::PrecisionScope scope(precision);
    loss = torch::mse_loss(model->forward(batch.input), batch.target);
  }
  if (auxiliary_weight != 0.0) loss = loss + auxiliary_weight * model->auxiliary_loss();
  loss.backward();
  sgd.step();
  Reference reference{loss.item<double>(), {}};
  for (const auto& item : model->named_parameters()) {
    reference.parameters[item.key()] = item.value().detach().clone();
  }
  return reference;
}

std::vector<RankResult> run_pipeline(const Case& c, PipelineSchedule schedule, int micro_batches,
                                     int iterations = 1, int64_t global_batch = kGlobalBatch) {
  // Models and data built here, in order: torch's generator is global.
  std::vector<std::shared_ptr<runtime::ZooModel>> models;
  std::vector<runtime::SyntheticBatch> batches;
  for (int r = 0; r < c.world; ++r) {
    models.push_back(build(c.model));
    batches.push_back(data_for(*models.back(), c.model, global_batch));
  }
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<RankResult> results(c.world);
  std::vector<std::thread> threads;
  for (int r = 0; r < c.world; ++r) {
    threads.emplace_back([&, r]() {
      try {
        const auto timeout = std::chrono::seconds(60);
        auto world = runtime::make_gloo_communicator(store, r, c.world, timeout);
        const int stage = c.layout.stage_of(r);
        const auto& ranks = c.layout.stages[stage].ranks;
        std::unique_ptr<runtime::Communicator> replicas;
        if (ranks.size() > 1) {
          auto prefixed =
              c10::make_intrusive<c10d::PrefixStore>("stage" + std::to_string(stage), store);
          replicas = runtime::make_gloo_communicator(prefixed, c.layout.replica_of(r),
                                                     static_cast<int>(ranks.size()), timeout);
        }
        runtime::PipelineOptions options;
        options.layout = c.layout;
        options.schedule = schedule;
        options.micro_batches = micro_batches;
        options.replica_sync = baselines::replica_sum_factory(0.01, 1.0);  // several buckets
        options.precision = c.precision;
        options.auxiliary_loss_weight = c.auxiliary_weight;
        runtime::PipelineStage executor(*models[r], options, *world, replicas.get(),
                                        runtime::sample_of(batches[r]));
        torch::optim::SGD sgd(executor.stage_parameters(), torch::optim::SGDOptions(kLr));
        runtime::TraceRecorder trace;
        for (int it = 0; it < iterations; ++it) {
          sgd.zero_grad();
          results[r].stats = executor.run_iteration(batches[r].input, batches[r].target, trace);
          sgd.step();
        }
        results[r].loss = results[r].stats.loss;
        results[r].last_stage = executor.stages().back() + 1 == c.layout.stage_count();
        const auto names = executor.stage_parameter_names();
        const auto params = executor.stage_parameters();
        for (size_t i = 0; i < names.size(); ++i) results[r].parameters[names[i]] = params[i];
        world->barrier();
      } catch (const std::exception& e) {
        results[r].error = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

std::vector<Case> cases() {
  return {
      {"mlp_2_stages", mlp(), {{{0, 3, {0}}, {4, 9, {1}}}}, 2},
      {"mlp_2x2_replicated", mlp(), {{{0, 3, {0, 1}}, {4, 9, {2, 3}}}}, 4},
      {"mlp_3_stages", mlp(), {{{0, 2, {0}}, {3, 6, {1}}, {7, 9, {2}}}}, 3},
      // A first stage without parameters (the flatten alone), as the planner may choose:
      // it has nothing to differentiate.
      {"mlp_parameterless_first_stage", mlp(), {{{0, 0, {0}}, {1, 9, {1}}}}, 2},
      // Uneven replication: 2 replicas feed 1, which feeds 2 (rows regrouped both ways).
      {"mlp_3_stages_2_1_2", mlp(), {{{0, 2, {0, 1}}, {3, 6, {2}}, {7, 9, {3, 4}}}}, 5},
      {"bert_2_stages", bert(), {{{0, 2, {0}}, {3, 5, {1}}}}, 2},
      {"bert_3_stages_replicated", bert(), {{{0, 1, {0, 1}}, {2, 3, {2}}, {4, 5, {3}}}}, 4},
      {"llama_2_stages", llama(), {{{0, 1, {0}}, {2, 4, {1}}}}, 2},
  };
}

struct Param {
  size_t case_index;
  PipelineSchedule schedule;
  int micro_batches;
};

// The pipeline's last-stage loss and every parameter after one step against one process's
// (relative 1e-5); every parameter on some stage.
void expect_single_process_training(const Case& c, PipelineSchedule schedule, int micro_batches) {
  const Reference reference = single_process(c.model);
  const auto results = run_pipeline(c, schedule, micro_batches);
  double loss = 0;
  std::map<std::string, int> covered;
  for (size_t r = 0; r < results.size(); ++r) {
    ASSERT_EQ(results[r].error, "") << "rank " << r;
    if (results[r].last_stage) loss += results[r].loss;
    for (const auto& [name, value] : results[r].parameters) {
      ++covered[name];
      const torch::Tensor& expected = reference.parameters.at(name);
      EXPECT_TRUE(torch::allclose(value, expected, 1e-5, 1e-12))
          << "rank " << r << " " << name << " max diff "
          << (value - expected).abs().max().item<double>();
    }
  }
  EXPECT_NEAR(loss, reference.loss, 1e-5 * std::abs(reference.loss));
  EXPECT_EQ(covered.size(), reference.parameters.size()) << "every parameter lives on a stage";
}

class PipelineEquivalence : public testing::TestWithParam<Param> {};

TEST_P(PipelineEquivalence, LossAndUpdatedParametersEqualSingleProcessTraining) {
  runtime_test::DoubleDefault double_precision;
  const Param p = GetParam();
  const Case c = cases()[p.case_index];
  expect_single_process_training(c, p.schedule, p.micro_batches);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return cases()[info.param.case_index].label + "_" + runtime::to_string(info.param.schedule) +
         "_" + std::to_string(info.param.micro_batches) + "mb";
}

std::vector<Param> params() {
  std::vector<Param> all;
  for (size_t i = 0; i < cases().size(); ++i) {
    for (auto schedule : {PipelineSchedule::kDapple, PipelineSchedule::kGpipe}) {
      for (int m : {1, 3, 4}) all.push_back({i, schedule, m});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Plans, PipelineEquivalence, testing::ValuesIn(params()), param_name);

// A model of `layers` layers cut into positions x stages-per-rank stages of (nearly) equal
// layer counts, placed as `schedule` places them, each position on `replicas` ranks.
PipelineLayout placed_layout(int layers, int positions, int replicas, PipelineSchedule schedule) {
  const bool two_per_rank =
      schedule == PipelineSchedule::kInterleaved1F1B || schedule == PipelineSchedule::kZbv;
  const int stages = positions * (two_per_rank ? 2 : 1);
  const std::vector<int> placement = runtime::placement_for(schedule, positions, stages);
  PipelineLayout layout;
  for (int c = 0; c < stages; ++c) {
    runtime::StageAssignment stage{layers * c / stages, layers * (c + 1) / stages - 1, {}};
    for (int i = 0; i < replicas; ++i) stage.ranks.push_back(placement[c] * replicas + i);
    layout.stages.push_back(stage);
  }
  return layout;
}

struct ScheduledCase {
  std::string label;
  ModelCase model;
  int layers, positions, replicas;
};

std::vector<ScheduledCase> scheduled_cases() {
  return {
      {"mlp_2_ranks", mlp(), 10, 2, 1},
      {"mlp_4_ranks", mlp(), 10, 4, 1},
      {"mlp_2_ranks_replicated", mlp(), 10, 2, 2},
      {"bert_2_ranks", bert(), 6, 2, 1},
      {"llama_2_ranks", llama(), 5, 2, 1},
  };
}

class ScheduleEquivalence : public testing::TestWithParam<Param> {};

TEST_P(ScheduleEquivalence, LossAndUpdatedParametersEqualSingleProcessTraining) {
  runtime_test::DoubleDefault double_precision;
  const Param p = GetParam();
  const ScheduledCase sc = scheduled_cases()[p.case_index];
  const Case c{sc.label, sc.model, placed_layout(sc.layers, sc.positions, sc.replicas, p.schedule),
               sc.positions * sc.replicas};
  expect_single_process_training(c, p.schedule, p.micro_batches);
}

std::vector<Param> scheduled_params() {
  std::vector<Param> all;
  for (size_t i = 0; i < scheduled_cases().size(); ++i) {
    for (auto schedule :
         {PipelineSchedule::kGpipe, PipelineSchedule::kDapple, PipelineSchedule::kInterleaved1F1B,
          PipelineSchedule::kZbH1, PipelineSchedule::kZbv}) {
      for (int m : {1, 4, 6}) all.push_back({i, schedule, m});
    }
  }
  return all;
}

std::string scheduled_name(const testing::TestParamInfo<Param>& info) {
  return scheduled_cases()[info.param.case_index].label + "_" +
         runtime::to_string(info.param.schedule) + "_" + std::to_string(info.param.micro_batches) +
         "mb";
}

INSTANTIATE_TEST_SUITE_P(Schedules, ScheduleEquivalence, testing::ValuesIn(scheduled_params()),
                         scheduled_name);

// Loss and parameters of a pipeline against one process; the loss summed over every rank
// (the last stage's task loss, every stage's balancing loss).
void expect_matches(const std::vector<RankResult>& results, const Reference& reference,
                    double rtol) {
  double loss = 0;
  for (size_t r = 0; r < results.size(); ++r) {
    ASSERT_EQ(results[r].error, "") << "rank " << r;
    loss += results[r].loss;
    for (const auto& [name, value] : results[r].parameters) {
      const torch::Tensor& expected = reference.parameters.at(name);
      EXPECT_TRUE(torch::allclose(value, expected, rtol, 1e-12))
          << "rank " << r << " " << name << " max diff "
          << (value - expected).abs().max().item<double>();
    }
  }
  EXPECT_NEAR(loss, reference.loss, rtol * std::abs(reference.loss));
}

TEST(PipelineMixtureOfExperts, BalancingLossOfEveryStageEqualsOneProcessRoutingInGroups) {
  // bert_moe, 4 layers, a mixture in each (top-2, capacity 1: tokens dropped), one on each of
  // 2 stages. Each micro-batch's tokens are routed as one group on its stage, so the single
  // process routes the global batch in `micro_batches` groups; each stage adds its mixtures'
  // balancing loss x 0.01 x the micro-batch's share, the process 0.01 x the groups' mean.
  runtime_test::DoubleDefault double_precision;
  ModelCase moe{"bert_moe", {{6}, 3, /*depth=*/4, /*width=*/64}};
  moe.options.moe = {.experts = 4, .top_k = 2, .capacity_factor = 1.0, .every = 1};
  const Case c{"bert_moe_2_stages",       moe, {{{0, 2, {0}}, {3, 6, {1}}}}, 2,
               runtime::Precision::kFp32, 0.01};
  for (auto schedule : {PipelineSchedule::kDapple, PipelineSchedule::kGpipe}) {
    for (int m : {1, 3, 4}) {
      SCOPED_TRACE(runtime::to_string(schedule) + " " + std::to_string(m) + " micro-batches");
      ModelCase grouped = moe;
      grouped.options.moe_groups = m;
      expect_matches(run_pipeline(c, schedule, m), single_process(grouped, c.precision, 0.01),
                     1e-5);
    }
  }
  // The balancing loss moves the routers: without it they end elsewhere.
  ModelCase grouped = moe;
  grouped.options.moe_groups = 3;
  const Reference with = single_process(grouped, c.precision, 0.01);
  const Reference without = single_process(grouped);
  const std::string router = "encoder.layer.0.moe.router.weight";
  EXPECT_FALSE(
      torch::allclose(with.parameters.at(router), without.parameters.at(router), 1e-9, 1e-12));
}

TEST(PipelinePrecision, Bf16StagesComputeWhatOneProcessComputesUnderAutocast) {
  // One micro-batch, one rank per stage: the same operations as one process under autocast,
  // so the same numbers; and not the fp32 ones.
  const Case c{"bert_bf16", bert(), {{{0, 2, {0}}, {3, 5, {1}}}}, 2, runtime::Precision::kBf16};
  const Reference bf16 = single_process(c.model, runtime::Precision::kBf16);
  const auto results = run_pipeline(c, PipelineSchedule::kDapple, 1);
  expect_matches(results, bf16, 1e-6);
  const Reference fp32 = single_process(c.model);
  double largest = 0;
  for (const auto& [name, value] : fp32.parameters) {
    largest = std::max(largest, (value - bf16.parameters.at(name)).abs().max().item<double>());
  }
  EXPECT_GT(largest, 1e-5) << "bf16 trained like fp32: autocast was not on";
}

TEST(PipelineMemory, DappleStashBoundedByStagesGpipeGrowsWithMicroBatches) {
  // A 2-stage MLP whose activations dominate its allocations (narrow layers, many samples);
  // micro-batches of 256 samples, 2 to 8 of them.
  Case c{"wide", {"mlp", {{128}, 8, /*depth=*/4, /*width=*/128}}, {{{0, 4, {0}}, {5, 9, {1}}}}, 2};
  constexpr int64_t kMicroBatch = 256;
  std::map<std::pair<PipelineSchedule, int>, runtime::PipelineIterationStats> first_stage;
  for (auto schedule : {PipelineSchedule::kDapple, PipelineSchedule::kGpipe}) {
    for (int m : {2, 4, 8}) {
      auto results = run_pipeline(c, schedule, m, /*iterations=*/2, kMicroBatch * m);
      for (const auto& r : results) ASSERT_EQ(r.error, "");
      first_stage[{schedule, m}] = results[0].stats;
    }
  }
  const auto stats = [&](PipelineSchedule s, int m) { return first_stage[{s, m}]; };
  for (int m : {2, 4, 8}) {
    EXPECT_EQ(stats(PipelineSchedule::kDapple, m).peak_in_flight, 2);
    EXPECT_EQ(stats(PipelineSchedule::kGpipe, m).peak_in_flight, m);
    // Boundary tensors kept for backward (the stage's outputs), counted exactly.
    const long long per_micro_batch = kMicroBatch * 128 * sizeof(float);
    EXPECT_EQ(stats(PipelineSchedule::kDapple, m).peak_boundary_bytes, 2 * per_micro_batch);
    EXPECT_EQ(stats(PipelineSchedule::kGpipe, m).peak_boundary_bytes, m * per_micro_batch);
  }
  // Measured through the allocator: everything autograd stashes for in-flight micro-batches.
  const auto dapple = [&](int m) {
    return stats(PipelineSchedule::kDapple, m).peak_allocated_bytes;
  };
  const auto gpipe = [&](int m) { return stats(PipelineSchedule::kGpipe, m).peak_allocated_bytes; };
  // GPipe stashes every micro-batch: its peak grows with their count (plus a fixed part for
  // backward's transient buffers); DAPPLE's stays flat.
  EXPECT_LT(gpipe(2), gpipe(4));
  EXPECT_GT(gpipe(8), 2 * gpipe(2)) << "gpipe " << gpipe(2) << " -> " << gpipe(8);
  EXPECT_LT(dapple(8), dapple(2) * 13 / 10) << "dapple " << dapple(2) << " -> " << dapple(8);
  EXPECT_LT(dapple(8), gpipe(8) / 2) << "dapple " << dapple(8) << " gpipe " << gpipe(8);
}

}  // namespace

namespace {

TEST(PipelineMemory, EveryScheduleHoldsWhatItsActionListKeepsInFlight) {
  // 2 ranks, 8 micro-batches of 256 samples: the peak of micro-batches forwarded and not yet
  // through their last backward is the list's own count on every rank, and the allocator sees
  // the difference: ZB-H1's last rank defers its W's and holds 2 micro-batches where 1F1B's
  // holds 1.
  constexpr int64_t kMicroBatch = 256;
  constexpr int kMicroBatches = 8;
  const ModelCase model{"mlp", {{128}, 8, /*depth=*/4, /*width=*/128}};
  std::map<PipelineSchedule, std::vector<RankResult>> runs;
  for (auto schedule : {PipelineSchedule::kDapple, PipelineSchedule::kZbH1,
                        PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZbv}) {
    const Case c{"memory", model, placed_layout(10, 2, 1, schedule), 2};
    runs[schedule] =
        run_pipeline(c, schedule, kMicroBatches, /*iterations=*/2, kMicroBatch * kMicroBatches);
    const PipelineLayout layout = placed_layout(10, 2, 1, schedule);
    const auto table = runtime::layout_schedule(schedule, layout, kMicroBatches);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(runs[schedule][r].error, "");
      EXPECT_EQ(runs[schedule][r].stats.peak_in_flight, runtime::peak_in_flight(table.actions[r]))
          << runtime::to_string(schedule) << " rank " << r;
    }
  }
  EXPECT_EQ(runs[PipelineSchedule::kDapple][1].stats.peak_in_flight, 1);
  EXPECT_EQ(runs[PipelineSchedule::kZbH1][1].stats.peak_in_flight, 2);
  EXPECT_GT(runs[PipelineSchedule::kZbH1][1].stats.peak_allocated_bytes,
            runs[PipelineSchedule::kDapple][1].stats.peak_allocated_bytes * 3 / 2);
}

}  // namespace
