// The worker contract: what the harness encodes is what a rank decodes, hand-written configs
// get the documented defaults, and a bad config names its key.
#include "runtime/protocol/worker_config.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/json_file.h"
#include "tests/test_util.h"

namespace {

using nlohmann::json;
using runtime::WorkerConfig;

WorkerConfig pipeline_config() {
  WorkerConfig c;
  c.model = {"bert", 4, {16}, 3, "cross_entropy", 2, 64};
  c.optimizer = {"sgd", 0.5, 0.9};
  c.iterations = 7;
  c.warmup = 2;
  c.seed = 11;
  c.threads = 2;
  c.heap = "system";
  c.collective_timeout_s = 630;
  c.log_buckets = true;
  c.pin_cpus = true;
  c.trace_iteration = 5;
  c.trace_iterations = 4;
  c.system.name = "dapple_2x1";
  c.system.gradients.bucket_mb = 0.5;
  c.system.gradients.first_bucket_mb = 0.25;
  c.system.pipeline = runtime::PipelineAxis{
      runtime::PipelineSchedule::kGpipe, "", 4, {{0, 3, {0}}, {4, 7, {1, 2}}}};
  return c;
}

TEST(WorkerConfig, RoundTripsEveryField) {
  const WorkerConfig c = pipeline_config();
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("pipeline").at("schedule"), "gpipe");
  EXPECT_EQ(encoded.at("system").at("kind"), "pipeline");
  const WorkerConfig d =
      runtime::worker_config_from_json(harness::parse_json(harness::json_text(encoded)));
  EXPECT_EQ(d.model.name, "bert");
  EXPECT_EQ(d.model.input_shape, std::vector<long long>{16});
  EXPECT_EQ(d.model.loss, "cross_entropy");
  EXPECT_EQ(d.model.width, 64);
  EXPECT_DOUBLE_EQ(d.optimizer.momentum, 0.9);
  EXPECT_EQ(d.seed, 11);
  EXPECT_EQ(d.heap, "system");
  EXPECT_DOUBLE_EQ(d.collective_timeout_s, 630);
  EXPECT_TRUE(d.log_buckets);
  EXPECT_TRUE(d.pin_cpus);
  EXPECT_EQ(d.trace_iteration, 5);
  EXPECT_EQ(d.trace_iterations, 4);
  EXPECT_TRUE(d.traces(8));
  EXPECT_FALSE(d.traces(9));
  EXPECT_FALSE(d.traces(4));
  ASSERT_TRUE(d.system.pipeline);
  EXPECT_EQ(d.system.pipeline->schedule, runtime::PipelineSchedule::kGpipe);
  EXPECT_EQ(d.system.pipeline->micro_batches, 4);
  ASSERT_EQ(d.system.pipeline->stages.size(), 2u);
  EXPECT_EQ(d.system.pipeline->stages[1].first_layer, 4);
  EXPECT_EQ(d.system.pipeline->stages[1].ranks, (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(d.system.gradients.bucket_mb, 0.5);
  EXPECT_EQ(d.system, c.system);
  EXPECT_EQ(runtime::to_json(d), encoded);
}

TEST(WorkerConfig, DdpConfigsCarryNoPipelineKeys) {
  WorkerConfig c = pipeline_config();
  c.system.pipeline.reset();
  c.system.gradients.mode = "sync";
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("kind"), "ddp");
  EXPECT_FALSE(encoded.at("system").contains("pipeline"));
  EXPECT_FALSE(encoded.at("system").contains("data"));
  EXPECT_EQ(runtime::worker_config_from_json(encoded).system.gradients.mode, "sync");
}

TEST(WorkerConfig, ExpertParallelCarriesTheMixtureShape) {
  WorkerConfig c = pipeline_config();
  c.model.name = "bert_moe";
  c.model.moe = {.experts = 8, .top_k = 1, .capacity_factor = 1.5, .every = 3};
  c.system.pipeline.reset();
  c.system.experts = true;
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("kind"), "expert_parallel");
  EXPECT_EQ(encoded.at("model").at("moe").at("experts"), 8);
  const WorkerConfig d =
      runtime::worker_config_from_json(harness::parse_json(harness::json_text(encoded)));
  EXPECT_EQ(runtime::kind_of(d.system), runtime::SystemKind::kExpertParallel);
  EXPECT_EQ(d.model.moe, c.model.moe);
  // Left out: the zoo's default mixture.
  json without = encoded;
  without["model"].erase("moe");
  EXPECT_EQ(runtime::worker_config_from_json(without).model.moe, runtime::MoeShape{});
}

TEST(WorkerConfig, ShardedCarriesItsStageUnitAndPrefetch) {
  WorkerConfig c = pipeline_config();
  c.system.pipeline.reset();
  c.system.data = {2, runtime::ShardUnitKind::kModel, false};
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("kind"), "sharded");
  const WorkerConfig d = runtime::worker_config_from_json(encoded);
  EXPECT_EQ(runtime::kind_of(d.system), runtime::SystemKind::kSharded);
  EXPECT_EQ(d.system.data.zero_stage, 2);
  EXPECT_EQ(d.system.data.unit, runtime::ShardUnitKind::kModel);
  EXPECT_FALSE(d.system.data.prefetch);
  // Replicas carry none of it.
  c.system.data = {};
  EXPECT_FALSE(runtime::to_json(c).at("system").contains("data"));
}

TEST(WorkerConfig, TensorParallelCarriesItsDegreeAndWhatElseItSplits) {
  WorkerConfig c = pipeline_config();
  c.system.pipeline.reset();
  c.system.tensor = {2, true, true, true};
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("kind"), "tensor_parallel");
  EXPECT_EQ(encoded.at("system").at("tensor"), json({{"degree", 2},
                                                     {"sequence_parallel", true},
                                                     {"vocabulary_parallel", true},
                                                     {"recompute_gather", true}}));
  const WorkerConfig d = runtime::worker_config_from_json(encoded);
  EXPECT_EQ(runtime::kind_of(d.system), runtime::SystemKind::kTensorParallel);
  EXPECT_EQ(d.system, c.system);
  json bad = encoded;
  bad["system"]["tensor"]["degree"] = 1;
  EXPECT_THROW(runtime::worker_config_from_json(bad), std::invalid_argument);
  c.system.tensor = {};
  EXPECT_FALSE(runtime::to_json(c).at("system").contains("tensor"));
}

TEST(WorkerConfig, AdamWsSettingsRoundTrip) {
  WorkerConfig c = pipeline_config();
  c.optimizer = {"adamw", 3e-4, 0.0, 0.8, 0.95, 1e-6, 0.1};
  const WorkerConfig d = runtime::worker_config_from_json(runtime::to_json(c));
  EXPECT_EQ(d.optimizer.name, "adamw");
  EXPECT_DOUBLE_EQ(d.optimizer.lr, 3e-4);
  EXPECT_DOUBLE_EQ(d.optimizer.beta1, 0.8);
  EXPECT_DOUBLE_EQ(d.optimizer.beta2, 0.95);
  EXPECT_DOUBLE_EQ(d.optimizer.eps, 1e-6);
  EXPECT_DOUBLE_EQ(d.optimizer.weight_decay, 0.1);
}

TEST(WorkerConfig, AHandWrittenConfigGetsTheDefaults) {
  const json minimal = {{"model", {{"name", "mlp"}, {"batch_size", 8}, {"input_shape", {64}}}},
                        {"optimizer", {{"lr", 0.1}}},
                        {"iterations", 3},
                        {"warmup", 1},
                        {"seed", 0},
                        {"threads", 1},
                        {"system", {{"name", "overlap"}}}};
  const WorkerConfig c = runtime::worker_config_from_json(minimal);
  EXPECT_EQ(runtime::kind_of(c.system), runtime::SystemKind::kDdp);
  EXPECT_EQ(c.system.gradients.mode, "overlap");
  EXPECT_DOUBLE_EQ(c.system.gradients.bucket_mb, 25);
  EXPECT_EQ(c.model.loss, "mse");
  EXPECT_EQ(c.heap, "retain");
  EXPECT_DOUBLE_EQ(c.collective_timeout_s, 300);
  EXPECT_EQ(c.trace_iteration, -1);
  EXPECT_FALSE(c.log_buckets);
  EXPECT_FALSE(c.pin_cpus);
}

std::string error_of(const json& document) {
  return harness_test::thrown_message<std::invalid_argument>(
      [&] { runtime::worker_config_from_json(document); });
}

// A hand-written system may name only its kind: the kind's axes follow (sharded: ZeRO-3 over
// layers with prefetch; expert_parallel: the expert axis); axes that make another kind are
// refused, as is an external system, which no rank runs.
TEST(WorkerConfig, AHandWrittenKindExpandsToItsAxesAndMustAgreeWithThem) {
  json c = runtime::to_json(pipeline_config());
  c["system"] = {{"name", "z"}, {"kind", "sharded"}};
  const runtime::ParallelSystem sharded = runtime::worker_config_from_json(c).system;
  EXPECT_EQ(sharded.data, (runtime::DataAxis{3, runtime::ShardUnitKind::kLayer, true}));
  c["system"] = {{"name", "e"}, {"kind", "expert_parallel"}};
  EXPECT_TRUE(runtime::worker_config_from_json(c).system.experts);
  c["system"] = {{"name", "d"}, {"kind", "ddp"}, {"data", {{"zero_stage", 2}}}};
  EXPECT_EQ(error_of(c), "worker config: system: its axes make a sharded system, not ddp");
  c["system"] = {{"name", "x"}, {"kind", "external"}};
  EXPECT_EQ(error_of(c), "worker config: system: an external system runs no harness rank");
  c["system"] = {{"name", "z"}, {"kind", "sharded"}, {"data", {{"zero_stage", 4}}}};
  EXPECT_EQ(error_of(c), "worker config: system.data.zero_stage must be 0-3");
}

TEST(WorkerConfig, ABadConfigNamesItsKey) {
  json c = runtime::to_json(pipeline_config());
  c["model"].erase("batch_size");
  EXPECT_EQ(error_of(c), "worker config: missing model.batch_size");
  c = runtime::to_json(pipeline_config());
  c["iterations"] = "many";
  EXPECT_EQ(error_of(c), "worker config: iterations has the wrong type");
  c = runtime::to_json(pipeline_config());
  c["system"]["kind"] = "zero";
  EXPECT_EQ(error_of(c),
            "worker config: system: unknown system kind 'zero' (expected ddp, expert_parallel, "
            "external, pipeline, sharded, spmd, tensor_parallel)");
  c = runtime::to_json(pipeline_config());
  c["system"]["pipeline"].erase("stages");
  EXPECT_EQ(error_of(c), "worker config: a pipeline system needs system.pipeline.stages");
  EXPECT_EQ(error_of(json::array()), "worker config: expected a JSON object");
}

TEST(WorkerConfig, SpmdCarriesItsSearchedOperators) {
  WorkerConfig c = pipeline_config();
  c.system.pipeline.reset();
  const json operators = json::array({{{"name", "tokens"}, {"output", "S0"}}});
  c.system.spmd = runtime::SpmdStrategy{
      .comm = "comm.json", .gflops = 0.0, .operators = operators, .measured_compute = true};
  const json encoded = runtime::to_json(c);
  EXPECT_EQ(encoded.at("system").at("kind"), "spmd");
  EXPECT_EQ(encoded.at("system").at("spmd").at("operators"), operators);
  EXPECT_EQ(encoded.at("system").at("spmd").at("measured_compute"), true);
  const WorkerConfig d = runtime::worker_config_from_json(encoded);
  EXPECT_EQ(runtime::kind_of(d.system), runtime::SystemKind::kSpmd);
  EXPECT_EQ(d.system, c.system);
  json bad = encoded;
  bad["system"]["spmd"]["operators"] = json::array();
  EXPECT_EQ(error_of(bad), "worker config: system.spmd.operators must be a non-empty list");
  bad["system"].erase("spmd");
  EXPECT_EQ(error_of(bad), "worker config: an spmd system needs system.spmd.operators");
}

}  // namespace
