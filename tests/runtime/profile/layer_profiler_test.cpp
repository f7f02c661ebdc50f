// The layer profiler's layer ranges and the hooks a stage profile uses (`harness profile
// layers --stages`): what a range times, how a finished stage keeps running.
#include "runtime/profile/layer_profiler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/ports.h"
#include "common/process_clock.h"
#include "runtime/models/llama_work.h"

namespace {

// MLP 8 -> 256 -> 256 -> 3: flatten, fc1, relu1, fc2, relu2, fc3.
runtime::LayerProfileRequest mlp_request(int first, int last) {
  runtime::LayerProfileRequest request;
  request.model = "mlp";
  request.batch = 4;
  request.input_shape = {8};
  request.num_classes = 3;
  request.repetitions = 2;
  request.warmup = 1;
  request.first_layer = first;
  request.last_layer = last;
  return request;
}

// llama: 2 blocks of width 64 over 16 tokens, 2 samples, timed once.
runtime::LayerProfileRequest small_llama_request(runtime::DecoderShape decoder) {
  runtime::LayerProfileRequest request;
  request.model = "llama";
  request.depth = 2;
  request.width = 64;
  request.decoder = decoder;
  request.input_shape = {16};
  request.batch = 2;
  request.repetitions = 1;
  request.warmup = 0;
  return request;
}

TEST(LayerProfiler, ARangeTimesItsLayersOnly) {
  const auto result = runtime::profile_layers(mlp_request(3, 5));
  EXPECT_EQ(result.first_layer, 3);
  EXPECT_EQ(result.chain_layers, 6);
  ASSERT_EQ(result.layers.size(), 3u);
  EXPECT_EQ(result.layers[0].name, "fc2");
  EXPECT_EQ(result.layers[2].name, "fc3");
  EXPECT_EQ(result.layers[0].activation_bytes, 4 * 256 * 4);
  EXPECT_EQ(result.layers[0].parameter_bytes, (256 * 256 + 256) * 4);
  EXPECT_EQ(result.layers[2].activation_bytes, 4 * 3 * 4);
  // The range's input came from a previous stage: its first layer computes an input gradient.
  EXPECT_GT(result.layers[0].backward.median_ms, 0);
  EXPECT_GT(result.whole_backward.median_ms, 0);
  EXPECT_GT(result.whole_step.median_ms, 0);
  EXPECT_EQ(result.input_bytes, 4 * 8 * 4);  // the model's input, whatever the range
}

// What each layer's forward holds until its backward, and what its backward works in, measured by
// the allocator: an MLP's layers hold their outputs (flatten is a view: nothing), a BERT block
// Korthikanti et al.'s 32 + 2as/h units of s b h fp32 pairs (their Table 2 without dropout, as
// activation_memory_test.cpp derives it), and a fully recomputed block only its output (2 units).
TEST(LayerProfiler, CountsWhatEachLayersForwardHoldsForItsBackward) {
  const auto mlp = runtime::profile_layers(mlp_request(0, 5));
  ASSERT_EQ(mlp.layers.size(), 6u);
  EXPECT_EQ(mlp.layers[0].stored_bytes, 0);
  for (size_t i = 1; i < mlp.layers.size(); ++i) {
    EXPECT_EQ(mlp.layers[i].stored_bytes, mlp.layers[i].activation_bytes) << mlp.layers[i].name;
  }
  // While its backward runs a layer allocates, above what it starts with, its weights' gradients
  // before they are accumulated into .grad and its input's: fc2 (256 x 256 and 256) with its
  // input's 4 x 256; fc1 (8 x 256 and 256) without, its input the model's; a ReLU its input's.
  std::vector<int64_t> working;
  for (const auto& layer : mlp.layers) working.push_back(layer.backward_working_bytes.value());
  EXPECT_EQ(working, (std::vector<int64_t>{0, (8 * 256 + 256) * 4, 4 * 256 * 4,
                                           (256 * 256 + 256 + 4 * 256) * 4, 4 * 256 * 4,
                                           (256 * 3 + 3 + 4 * 256) * 4}));
  runtime::LayerProfileRequest bert;
  bert.model = "bert";
  bert.depth = 2;
  bert.width = 256;  // 4 heads of 64
  bert.input_shape = {64};
  bert.batch = 2;
  bert.repetitions = 1;
  bert.warmup = 0;
  const double unit = 2.0 * 2 * 64 * 256;  // Korthikanti's 2-byte s b h, doubled in fp32
  const double held = static_cast<double>(*runtime::profile_layers(bert).layers[1].stored_bytes);
  EXPECT_NEAR(held / unit, 32 + 2.0 * 4 * 64 / 256, 0.05);
  bert.activation_checkpointing = "full";
  const double recomputed =
      static_cast<double>(*runtime::profile_layers(bert).layers[1].stored_bytes);
  EXPECT_NEAR(recomputed / unit, 2, 0.05);
}

// A BERT-MoE's mixture layer records what expert parallelism keeps on one rank and sends: its 4
// experts' parameters (each 64 -> 256 -> 64 with biases) and the token rows one dispatch sends,
// every token's 2 choices where the capacity drops none (2 samples of 16 tokens, width 64,
// fp32); with a tight capacity only the rows within it. The dense layers record none.
TEST(LayerProfiler, RecordsEachMixturesExpertsAndTheRowsItDispatches) {
  runtime::LayerProfileRequest request;
  request.model = "bert_moe";
  request.depth = 2;
  request.width = 64;
  request.input_shape = {16};
  request.batch = 2;
  request.moe = {4, 2, 8.0, 2};  // a capacity of 32 tokens an expert: nothing dropped
  request.repetitions = 1;
  request.warmup = 0;
  const auto roomy = runtime::profile_layers(request);
  ASSERT_EQ(roomy.layers.size(), 5u);  // embeddings, 2 encoder layers, pooler, classifier
  for (size_t i : {0u, 1u, 3u, 4u}) EXPECT_FALSE(roomy.layers[i].mixtures) << i;
  const auto& mixture = roomy.layers[2].mixtures;
  ASSERT_TRUE(mixture);
  EXPECT_EQ(mixture->count, 1);
  EXPECT_EQ(mixture->experts, 4);
  EXPECT_EQ(mixture->expert_parameter_bytes, 4 * (64 * 256 + 256 + 256 * 64 + 64) * 4);
  EXPECT_EQ(mixture->dispatch_bytes, 2 * 16 * 2 * 64 * 4);
  request.moe.capacity_factor = 0.5;  // ceil(0.5 x 32 x 2 / 4) = 8 tokens an expert
  const auto tight = runtime::profile_layers(request);
  ASSERT_TRUE(tight.layers[2].mixtures);
  EXPECT_LE(tight.layers[2].mixtures->dispatch_bytes, 4 * 8 * 64 * 4);
  EXPECT_GT(tight.layers[2].mixtures->dispatch_bytes, 0);
}

// Split as zero-bubble stages split it, a layer's I holds until W the gradients W reads: a
// Linear's, its output's gradient; nothing for a layer without weights or for the first Linear,
// whose input takes no gradient (its backward is all W). Unsplit, nothing is counted.
TEST(LayerProfiler, CountsWhatEachLayersIHoldsUntilW) {
  auto request = mlp_request(0, 5);
  EXPECT_FALSE(runtime::profile_layers(request).layers[3].weight_pending_bytes.has_value());
  request.split_backward = true;
  const auto result = runtime::profile_layers(request);
  std::vector<int64_t> pending;
  for (const auto& layer : result.layers) pending.push_back(layer.weight_pending_bytes.value());
  EXPECT_EQ(pending, (std::vector<int64_t>{0, 0, 0, 4 * 256 * 4, 0, 4 * 3 * 4}));
}

// `harness profile estimate`'s count of what an I holds until W (runtime/models/llama_work.h) is
// what the zoo's llama holds, measured: a block's and the norm's at twice the count's 16-bit
// bytes (the zoo runs in float32), the head's float32 logits' gradient as counted.
TEST(LayerProfiler, WhatAnIHoldsIsWhatTheEstimateCounts) {
  runtime::LayerProfileRequest request = small_llama_request({4, 2, 50});
  request.split_backward = true;
  const auto measured = runtime::profile_layers(request).layers;
  const runtime::LlamaDimensions dims{2, 64, 4, 2, runtime::llama_feed_forward_width(64), 50, 16};
  const auto counted = runtime::llama_layer_work(dims, 2, {});
  ASSERT_EQ(measured.size(), counted.size());
  EXPECT_EQ(measured[0].weight_pending_bytes.value(), 0);
  EXPECT_DOUBLE_EQ(double(measured[1].weight_pending_bytes.value()),
                   2 * counted[1].weight_pending_bytes);
  EXPECT_DOUBLE_EQ(double(measured[3].weight_pending_bytes.value()),
                   2 * counted[3].weight_pending_bytes);
  EXPECT_DOUBLE_EQ(double(measured[4].weight_pending_bytes.value()),
                   counted[4].weight_pending_bytes);
}

TEST(LayerProfiler, TheModelsInputNeedsNoGradient) {
  const auto result = runtime::profile_layers(mlp_request(0, 2));
  ASSERT_EQ(result.layers.size(), 3u);
  EXPECT_EQ(result.layers[0].name, "flatten");
  EXPECT_EQ(result.layers[0].backward.median_ms, 0);  // no parameters, no input gradient
  EXPECT_GT(result.layers[1].backward.median_ms, 0);
  EXPECT_GT(result.whole_backward.median_ms, 0);  // the gradient fed back at the range's end
}

// --split-backward: a weighted layer behind another's output times I and W apart; a layer
// without weights is all I and the first Linear (its input, the model's, takes no gradient)
// all W, each the same samples as its whole backward.
TEST(LayerProfiler, SplitBackwardTimesInputAndWeightGradientsApart) {
  auto request = mlp_request(0, -1);
  EXPECT_FALSE(runtime::profile_layers(request).layers[3].backward_input.has_value());
  request.split_backward = true;
  const auto result = runtime::profile_layers(request);
  ASSERT_EQ(result.layers.size(), 6u);
  for (const auto& layer : result.layers) {
    ASSERT_TRUE(layer.backward_input && layer.backward_weight) << layer.name;
  }
  const auto& fc1 = result.layers[1];
  EXPECT_EQ(fc1.backward_input->median_ms, 0);
  EXPECT_EQ(fc1.backward_weight->median_ms, fc1.backward.median_ms);
  const auto& relu1 = result.layers[2];
  EXPECT_EQ(relu1.backward_input->median_ms, relu1.backward.median_ms);
  EXPECT_EQ(relu1.backward_weight->median_ms, 0);
  const auto& fc2 = result.layers[3];
  EXPECT_GT(fc2.backward_input->median_ms, 0);
  EXPECT_GT(fc2.backward_weight->median_ms, 0);
  EXPECT_EQ(result.layers[0].backward_input->median_ms, 0);  // flatten: nothing to differentiate
}

TEST(LayerProfiler, HooksStartTimingOnceAndKeepRunning) {
  auto request = mlp_request(0, -1);
  int starts = 0, timed_before_start = -1, timed = 0, asks = 0;
  request.before_timed_run = [&] { ++timed; };
  request.after_warmup = [&] {
    ++starts;
    timed_before_start = timed;
  };
  request.keep_running = [&] { return ++asks <= 3; };
  const auto result = runtime::profile_layers(request);
  EXPECT_EQ(result.layers.size(), 6u);
  EXPECT_EQ(starts, 1);
  // One warm-up run: zero_grad, forward, backward, step, and 6 forwards + 5 backwards (the
  // flatten layer's output needs no gradient).
  EXPECT_EQ(timed_before_start, 4 + 6 + 5);
  EXPECT_EQ(asks, 4);
  EXPECT_EQ(result.untimed_runs, 3);
  EXPECT_EQ(timed, (1 + 2 + 3) * (4 + 6 + 5));
}

// After-idle timings: per repetition every gap once (gap 0, the baseline, first), each after
// the barrier of co-located copies and then the sleep, which is not timed.
TEST(LayerProfiler, AfterIdleTimesTheRangeAfterEachGap) {
  auto request = mlp_request(0, -1);
  request.repetitions = 3;
  request.idle_gaps_ms = {5, 40};
  int barriers = 0;
  request.before_timed_run = [&] { ++barriers; };
  const auto start = std::chrono::steady_clock::now();
  const auto result = runtime::profile_layers(request);
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.after_idle.size(), 3u);
  EXPECT_EQ(result.after_idle[0].gap_ms, 0.0);
  EXPECT_EQ(result.after_idle[1].gap_ms, 5.0);
  EXPECT_EQ(result.after_idle[2].gap_ms, 40.0);
  for (const auto& t : result.after_idle) {
    EXPECT_GT(t.forward.median_ms, 0);
    EXPECT_GT(t.backward.median_ms, 0);
    EXPECT_LT(t.forward.median_ms, 40.0) << "the sleep was timed";
  }
  EXPECT_GE(elapsed_ms, 3 * (5 + 40));  // every repetition slept every gap
  // Warm-up and timed runs as in HooksStartTimingOnceAndKeepRunning, then 3 x 3 idle passes.
  EXPECT_EQ(barriers, (1 + 3) * (4 + 6 + 5) + 3 * 3);
  request.idle_gaps_ms = {0};
  EXPECT_THROW(runtime::profile_layers(request), std::invalid_argument);
}

// --activation-checkpointing: the blocks run through the model as a rank's do, recorded in the
// result; a model without blocks and a split backward (the zero-bubble schedules recompute
// nothing) are refused.
TEST(LayerProfiler, RecomputationIsRecordedAndRefusedWhereNothingRecomputes) {
  runtime::LayerProfileRequest request = small_llama_request({2, 2, 50});
  for (const std::string how : {"full", "selective"}) {
    request.activation_checkpointing = how;
    request.recompute_every = how == "full" ? 2 : 1;
    const auto result = runtime::profile_layers(request);
    EXPECT_EQ(result.activation_checkpointing, how);
    EXPECT_EQ(result.recompute_every, request.recompute_every);
    ASSERT_EQ(result.layers.size(), 5u);  // embedding, 2 blocks, norm, head
    EXPECT_GT(result.layers[1].backward.median_ms, 0);
  }
  request.split_backward = true;
  try {
    runtime::profile_layers(request);
    FAIL() << "a split backward with recomputation was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--split-backward"), std::string::npos) << e.what();
  }
  auto mlp = mlp_request(0, 5);
  mlp.activation_checkpointing = "full";
  try {
    runtime::profile_layers(mlp);
    FAIL() << "recomputing an MLP was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "profile: --activation-checkpointing recomputes transformer blocks; mlp has none");
  }
}

TEST(LayerProfiler, RejectsARangeOutsideTheModel) {
  for (const auto& [first, last] : {std::pair{4, 2}, std::pair{0, 6}, std::pair{-1, 2}}) {
    try {
      runtime::profile_layers(mlp_request(first, last));
      FAIL() << first << "-" << last << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "profile: layers " + std::to_string(first) + "-" +
                                           std::to_string(last) +
                                           " are not within the model's 0-5");
    }
  }
}

// Stage k finishes its timed runs k * 60 ms after the others start; every stage must keep
// running until the last one has finished.
TEST(StageProfileSync, AFinishedStageRunsUntilTheLastFinishes) {
  constexpr int kStages = 3;
  const int port = harness::pick_free_port();
  std::atomic<int> started{0}, finished{0};
  std::atomic<int> early_start{0}, stopped_early{0};
  std::barrier all_done(kStages);  // stage 0 serves the store: it must outlive the others' use
  std::vector<std::thread> threads;
  for (int s = 0; s < kStages; ++s) {
    threads.emplace_back([&, s] {
      const auto sync = runtime::make_stage_profile_sync({port}, s, kStages, 1, 30);
      std::this_thread::sleep_for(std::chrono::milliseconds(20 * (kStages - s)));
      started.fetch_add(1);
      sync.start();
      if (started.load() != kStages) early_start.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(60 * s));
      finished.fetch_add(1);
      while (sync.keep_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (finished.load() != kStages) stopped_early.fetch_add(1);
      all_done.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(early_start.load(), 0);
  EXPECT_EQ(stopped_early.load(), 0);
}

// 2 stages x 2 replicas (`--stages ... --co-located 2`): a stage's replicas pass each timed
// piece together, the stages do not wait for each other, and replicas that finish at
// different moments make different numbers of untimed runs without blocking on a partner.
TEST(StageProfileSync, AStagesReplicasRunInLockstepUntilTheyFinish) {
  constexpr int kStages = 2, kReplicas = 2, kPieces = 12;
  const int port = harness::pick_free_port();
  std::atomic<int> arrived[kStages][kPieces] = {};
  std::atomic<int> early{0}, untimed[kStages * kReplicas] = {};
  std::atomic<int> stage_pieces_done[kStages] = {};
  std::atomic<int> stage1_behind_stage0{0};
  std::barrier all_done(kStages * kReplicas);
  std::vector<std::thread> threads;
  for (int p = 0; p < kStages * kReplicas; ++p) {
    threads.emplace_back([&, p] {
      const int stage = p / kReplicas, replica = p % kReplicas;
      const auto sync = runtime::make_stage_profile_sync({port}, p, kStages, kReplicas, 30);
      ASSERT_TRUE(sync.before_timed_run);
      sync.start();
      for (int k = 0; k < kPieces; ++k) {
        // Stage 1 is 4x slower than stage 0; within a stage, the slower replica alternates.
        const int ms = (stage == 0 ? 2 : 8) + ((k + replica) % 2 == 0 ? 3 : 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        arrived[stage][k].fetch_add(1);
        sync.before_timed_run();
        if (arrived[stage][k].load() != kReplicas) early.fetch_add(1);
        stage_pieces_done[stage].fetch_add(1);
      }
      // Stage 1's replicas must not have been held to stage 0's pace or the reverse.
      if (stage == 0 && stage_pieces_done[1].load() < kReplicas * kPieces)
        stage1_behind_stage0.fetch_add(1);
      while (sync.keep_running()) {
        sync.before_timed_run();  // untimed: returns at once
        untimed[p].fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(1 + replica));
      }
      all_done.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(early.load(), 0);
  for (int s = 0; s < kStages; ++s) {
    for (int k = 0; k < kPieces; ++k) EXPECT_EQ(arrived[s][k].load(), kReplicas) << s << " " << k;
  }
  EXPECT_EQ(stage1_behind_stage0.load(), kReplicas);  // stage 0 finished ahead, both replicas
  EXPECT_GT(untimed[0].load(), 0);                    // and kept running until stage 1 finished
  EXPECT_GT(untimed[1].load(), 0);
}

TEST(ProcessCpuClock, CountsWorkNotWaiting) {
  const double cpu_before_sleep = harness::process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(harness::process_cpu_ms() - cpu_before_sleep, 30.0);  // a wall clock would say 100

  // 50 CPU milliseconds of spinning take at least 50 wall milliseconds (more when this thread
  // waits for a core): a clock in other units would stop the loop far sooner or later.
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = harness::process_cpu_ms();
  volatile double sink = 0;
  while (harness::process_cpu_ms() - cpu_start < 50.0) sink = sink + 1.0;
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start)
          .count();
  EXPECT_GE(wall_ms, 49.0);
  EXPECT_LT(wall_ms, 5000.0);
}

}  // namespace
