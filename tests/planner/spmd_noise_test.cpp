// HiDup's Table IV for the SPMD search (planner/spmd/noise_study.h): the perturbations drawn in
// range and reproducibly, no loss without noise, and a strategy searched on wrong communication
// costs priced on the true ones.
#include <gtest/gtest.h>

#include "planner/spmd/noise_study.h"
#include "planner/spmd/strategy_search.h"
#include "planner/spmd/transformer_graph.h"

namespace harness::spmd {
namespace {

OperatorGraph small_decoder(int ranks) {
  TransformerShape shape;
  shape.batch = 4;
  shape.tokens = 64;
  shape.width = 256;
  shape.depth = 2;
  shape.heads = shape.kv_heads = 4;
  shape.feed_forward = 768;
  shape.vocabulary = 1024;
  return transformer_graph(shape, ranks);
}

SpmdCosts loopback_costs() {
  SpmdCosts costs;
  costs.flops_per_s = 86e9;
  for (auto& fit : costs.fits) fit = {2e-4, 1e9};
  return costs;
}

TEST(SpmdNoise, PerturbationsStayInRangeAndRepeatPerSeed) {
  const OperatorGraph graph = small_decoder(2);
  const OperatorGraph noisy = perturb_flops(graph, 0.4, 7);
  bool changed = false;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const double base = graph.operators[i].forward_flops, got = noisy.operators[i].forward_flops;
    EXPECT_GE(got, base * 0.6);
    EXPECT_LT(got, base * 1.4 + 1e-300);
    changed |= got != base;
  }
  EXPECT_TRUE(changed);
  EXPECT_EQ(perturb_flops(graph, 0.4, 7).operators[5].forward_flops,
            noisy.operators[5].forward_flops);
  EXPECT_NE(perturb_flops(graph, 0.4, 8).operators[5].forward_flops,
            noisy.operators[5].forward_flops);
  // Twice the communication: latencies doubled, bandwidths halved (within the 10% noise).
  const SpmdCosts costs = loopback_costs(), scaled = perturb_collectives(costs, 0.1, 2.0, 3);
  for (size_t c = 0; c < costs.fits.size(); ++c) {
    EXPECT_DOUBLE_EQ(scaled.fits[c].latency_s, 2 * costs.fits[c].latency_s);
    EXPECT_GE(scaled.fits[c].bus_bytes_per_s, costs.fits[c].bus_bytes_per_s * 0.9 / 2);
    EXPECT_LT(scaled.fits[c].bus_bytes_per_s, costs.fits[c].bus_bytes_per_s * 1.1 / 2);
  }
}

TEST(SpmdNoise, NoNoiseLosesNothingAndNoiseNeverBeatsTheOptimum) {
  const OperatorGraph graph = small_decoder(4);
  for (const auto& outcome : noise_study(graph, loopback_costs(), {}, 3, 1)) {
    EXPECT_DOUBLE_EQ(outcome.relative, 1.0);
    EXPECT_TRUE(outcome.same_strategy);
  }
  const double optimum = search_strategy(graph, loopback_costs()).seconds;
  for (const auto& outcome : noise_study(graph, loopback_costs(), {0.8, 0.8, 1.0}, 10, 1)) {
    EXPECT_GE(outcome.relative, 1.0 - 1e-12) << outcome.seed;
    EXPECT_NEAR(outcome.true_seconds, outcome.relative * optimum, 1e-12 * optimum);
  }
}

// With collectives almost free the optimum splits every operator; believing them a thousand
// times dearer, the search keeps most of them whole and loses that on the true costs.
TEST(SpmdNoise, WrongCommunicationCostsLoseOnTheTrueOnes) {
  const OperatorGraph graph = small_decoder(4);
  SpmdCosts cheap = loopback_costs();
  for (auto& fit : cheap.fits) fit = {1e-7, 1e12};
  const auto outcomes = noise_study(graph, cheap, {0, 0, 1e5}, 2, 1);
  for (const auto& outcome : outcomes) {
    EXPECT_FALSE(outcome.same_strategy);
    EXPECT_GT(outcome.relative, 1.5);
  }
  EXPECT_THROW(noise_study(graph, cheap, {1.0, 0, 1}, 1, 1), std::invalid_argument);
  EXPECT_THROW(noise_study(graph, cheap, {0, 0, 0}, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace harness::spmd
