// HiDup's search (planner/spmd): the cost of collectives and strategies
// against hand-computed values, and the dynamic program over cuts against exhaustive
// enumeration on random graphs small enough to enumerate.
#include <gtest/gtest.h>

#include <random>

#include "planner/spmd/signatures.h"
#include "planner/spmd/strategy_search.h"

namespace harness::spmd {
namespace {

SpmdCosts unit_costs() {
  SpmdCosts costs;
  costs.flops_per_s = 1e9;
  for (auto& fit : costs.fits) fit = {1e-3, 1e9};  // 1 ms + 1 ns a bus byte
  return costs;
}

TEST(SpmdCosts, CollectivesPayLatencyAndBusBytes) {
  const SpmdCosts costs = unit_costs();
  // All-reduce over 4 ranks: 1 ms + 1e6 x 2 x 3/4 ns.
  EXPECT_DOUBLE_EQ(collective_seconds(costs, Collective::kAllReduce, 1e6, 4), 1e-3 + 1.5e-3);
  EXPECT_DOUBLE_EQ(collective_seconds(costs, Collective::kAllGather, 1e6, 4), 1e-3 + 0.75e-3);
  EXPECT_DOUBLE_EQ(collective_seconds(costs, Collective::kAllGather, 1e6, 1), 0.0);
  EXPECT_DOUBLE_EQ(collective_seconds(costs, Collective::kNone, 1e6, 4), 0.0);
}

// Megatron's MLP on 2 ranks with a batch of one (no data parallelism): column then row then a
// replicated consumer. Whole: 3 x (2 + 2) GFLOP = 12 s at 1 GFLOP/s. Split: half the compute
// (6 s), the row's partial output all-reduced forward (1 ms + 1e8 x 1 ns = 0.101 s) and the
// column's partial input gradient all-reduced backward (also 0.101 s).
OperatorGraph megatron_mlp() {
  OperatorGraph graph;
  graph.ranks = 2;
  const OperatorShape source{0, true, 0}, layer{1, true, 8e6};
  const Divisible none{};
  Signature input = replicated_signature(source);
  graph.operators.push_back({"input", OperatorKind::kTokens, {}, 0, 0, 1e8, {input}});
  graph.operators.push_back({"fc1",
                             OperatorKind::kLinear,
                             {0},
                             2e9,
                             8e6,
                             1e8,
                             linear_signatures(layer, 2, none, true, false)});
  graph.operators.push_back({"fc2",
                             OperatorKind::kLinear,
                             {1},
                             2e9,
                             8e6,
                             1e8,
                             linear_signatures(layer, 2, none, false, true)});
  graph.operators.push_back(
      {"head", OperatorKind::kNorm, {2}, 2e9, 0, 1e8, norm_signatures({1, true, 0}, 2, none)});
  return graph;
}

TEST(SpmdSearch, FindsMegatronsColumnThenRowAtItsHandComputedCost) {
  const OperatorGraph graph = megatron_mlp();
  const SearchResult found = search_strategy(graph, unit_costs());
  ASSERT_EQ(found.strategy.size(), 4u);
  EXPECT_EQ(graph.operators[1].signatures[found.strategy[1]].kind, SignatureKind::kColumn);
  EXPECT_EQ(graph.operators[2].signatures[found.strategy[2]].kind, SignatureKind::kRow);
  const double compute = (2e9 + 2e9) * 3 / 2 / 1e9 + 2e9 * 3 / 1e9;
  EXPECT_NEAR(found.seconds, compute + 2 * (1e-3 + 1e8 * 1e-9), 1e-12);
  const StrategyCost cost = strategy_cost(graph, unit_costs(), found.strategy);
  EXPECT_NEAR(cost.communication_s, 0.202, 1e-12);
  // Held: input and head outputs whole (1e8 each), fc1's output split (5e7), fc2's partial
  // whole (1e8), the two halves of the weights with AdamW's state (2 x 4e6 x 4).
  EXPECT_DOUBLE_EQ(cost.memory_bytes, 1e8 + 5e7 + 1e8 + 1e8 + 2 * 4e6 * 4);
}

TEST(SpmdSearch, KeepsEverythingWholeWhenCollectivesCostMoreThanTheWork) {
  OperatorGraph graph = megatron_mlp();
  for (Operator& op : graph.operators) op.forward_flops /= 1e6;
  const SearchResult found = search_strategy(graph, unit_costs());
  for (size_t i = 0; i < found.strategy.size(); ++i) {
    EXPECT_EQ(graph.operators[i].signatures[found.strategy[i]].kind, SignatureKind::kReplicated)
        << i;
  }
  EXPECT_NEAR(found.seconds, 6e3 * 3 / 1e9, 1e-15);
}

// Measured times price compute in place of the FLOPs: the split MLP measured as slow as whole
// (a small operator's split work is not faster) keeps every operator whole, at the measured sum.
TEST(SpmdSearch, PricesComputeByMeasuredTimesWhereTheGraphCarriesThem) {
  OperatorGraph graph = megatron_mlp();
  for (Operator& op : graph.operators) {
    for (Signature& signature : op.signatures)
      signature.measured_compute_s = op.name == "input" ? 0.0 : 0.5;
  }
  const SearchResult found = search_strategy(graph, unit_costs());
  for (size_t i = 0; i < found.strategy.size(); ++i) {
    EXPECT_EQ(graph.operators[i].signatures[found.strategy[i]].kind, SignatureKind::kReplicated)
        << i;
  }
  EXPECT_NEAR(found.seconds, 3 * 0.5, 1e-12);
  const Signature& column = graph.operators[1].signatures[1];
  ASSERT_EQ(column.kind, SignatureKind::kColumn);
  EXPECT_DOUBLE_EQ(operator_cost(unit_costs(), 2, graph.operators[1], column).compute_s, 0.5);
}

TensorForm random_form(std::mt19937_64& random) {
  const int pick = static_cast<int>(random() % 5);
  if (pick == 3) return kReplicated;
  if (pick == 4) return kPartial;
  return sharded(pick);
}

Signature random_signature(std::mt19937_64& random, size_t arity, int ranks) {
  Signature signature;
  signature.kind = static_cast<SignatureKind>(random() % 11);
  for (size_t i = 0; i < arity; ++i) {
    signature.inputs.push_back(random_form(random));
    signature.input_grads.push_back(random() % 5 ? std::optional(random_form(random))
                                                 : std::nullopt);
  }
  signature.output = random_form(random);
  if (random() % 6) signature.output_grad = random_form(random);
  signature.compute_share = random() % 2 ? 1.0 : 1.0 / ranks;
  signature.parameter_share = random() % 2 ? 1.0 : 1.0 / ranks;
  signature.synced_gradient_bytes = static_cast<double>(random() % 3) * 1e6;
  if (random() % 4 == 0) signature.inner.push_back({Collective::kAllToAll, 2e6, 2});
  return signature;
}

// 9 to 12 operators of 3-4 signatures each (3 from 11 operators on); every operator reads the one
// before it and, now and then, one further back (a residual's long edge), so that cuts hold two or
// three outputs.
OperatorGraph random_graph(uint64_t seed, int operators) {
  std::mt19937_64 random(seed);
  OperatorGraph graph;
  graph.ranks = 2 + static_cast<int>(random() % 3);
  for (int i = 0; i < operators; ++i) {
    Operator op{"op" + std::to_string(i),
                OperatorKind::kLinear,
                {},
                1e6 * static_cast<double>(random() % 50),
                4e6,
                1e6 * static_cast<double>(1 + random() % 8),
                {}};
    if (i > 0) op.inputs.push_back(i - 1);
    if (i > 2 && random() % 3 == 0) op.inputs.push_back(i - 2 - static_cast<int>(random() % 2));
    const int signatures = operators > 10 ? 3 : 3 + static_cast<int>(random() % 2);
    for (int s = 0; s < signatures; ++s) {
      op.signatures.push_back(random_signature(random, op.inputs.size(), graph.ranks));
    }
    graph.operators.push_back(std::move(op));
  }
  return graph;
}

TEST(SpmdSearch, EqualsExhaustiveEnumerationOnEverySmallGraph) {
  SpmdCosts costs = unit_costs();
  costs.fits[static_cast<int>(Collective::kAllToAll)] = {2e-4, 4e8};
  costs.fits[static_cast<int>(Collective::kReduceScatter)] = {5e-4, 2e9};
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const OperatorGraph graph = random_graph(seed, 9 + static_cast<int>(seed % 4));
    const SearchResult found = search_strategy(graph, costs);
    const SearchResult best = enumerate_strategies(graph, costs);
    EXPECT_NEAR(found.seconds, best.seconds, 1e-12 * best.seconds) << "seed " << seed;
    EXPECT_DOUBLE_EQ(strategy_cost(graph, costs, found.strategy).seconds(), found.seconds);
    EXPECT_LE(found.states, best.states) << "seed " << seed;
  }
}

TEST(SpmdSearch, RefusesMalformedGraphsAndTooManyStates) {
  OperatorGraph graph = random_graph(7, 6);
  graph.operators[3].inputs = {4};
  EXPECT_THROW(search_strategy(graph, unit_costs()), std::invalid_argument);
  graph = random_graph(7, 6);
  graph.operators[2].signatures[0].inputs.clear();
  EXPECT_THROW(search_strategy(graph, unit_costs()), std::invalid_argument);
  graph = random_graph(7, 12);
  EXPECT_THROW(search_strategy(graph, unit_costs(), 2), std::invalid_argument);
  EXPECT_THROW(enumerate_strategies(graph, unit_costs(), 100), std::invalid_argument);
}

}  // namespace
}  // namespace harness::spmd
