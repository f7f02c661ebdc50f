// HiDup's searched strategies executed (runtime/parallel/spmd_transformer.h) on the Llama-style
// decoder, over real Gloo (a thread per rank): the search (planner/spmd) writes its plan as
// `harness spmd --out` does, the ranks read it, and from one seed after 10 AdamW steps the
// ranks' weights put together equal one process's (float64, relative 1e-9) -- for the strategies
// the search finds under dear, loopback-like and cheap links, for DDP's and Megatron's, and for
// arbitrary mixtures that put every form change (all-gather, all-reduce, reduce-scatter,
// all-to-all, slices, partial sums) between some pair of operators, at 2 and 4 ranks.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "planner/report/spmd_report.h"
#include "planner/spmd/reference_strategies.h"
#include "planner/spmd/strategy_search.h"
#include "planner/spmd/transformer_graph.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/peerless_group.h"
#include "runtime/parallel/spmd_transformer.h"
#include "tests/runtime/double_default.h"
#include "tests/runtime/gloo_ranks.h"

// A namespace of its own: the runtime tests build as one unity file, beside other tests' names.
namespace spmd_transformer_test {

namespace spmd = harness::spmd;
using Parameters = std::map<std::string, torch::Tensor>;

constexpr int kSteps = 10;
constexpr int64_t kBatch = 4, kTokens = 8, kDepth = 2;

// The model and its loss: llama (next-token cross entropy), bert (a 2-class head, by cross
// entropy or mse) or vit (a 4-class head).
struct Workload {
  std::string model = "llama";
  std::string loss = "cross_entropy";
  int64_t top_k = 0;  // bert_moe, vit_moe: 2 (GShard) or 1 (Switch)
};
const Workload kLlama{};
// bert's shape with a mixture of 4 experts in its second block, capacity factor 1.25.
const Workload kGshard{"bert_moe", "cross_entropy", 2}, kSwitch{"bert_moe", "cross_entropy", 1};
const Workload kVit{"vit"}, kVitMoe{"vit_moe", "cross_entropy", 2};

bool is_vit(const Workload& w) { return w.model.starts_with("vit"); }
// vit's 32 x 32 images: 4 patches and the class token.
constexpr int64_t kImage = 32, kVitTokens = 5, kVitClasses = 4;

// llama: width 64, 8 heads of 8 over 4 key/value heads, a vocabulary of 96 (which 2 and 4 ranks
// divide); bert and vit: width 128 (2 heads of 64); bert's 30522-token vocabulary.
// `groups`: the capacity groups bert_moe's one process routes the batch in.
runtime::ModelOptions options_of(const Workload& w, int64_t groups = 1) {
  runtime::ModelOptions options;
  options.input_shape = {kTokens};
  if (is_vit(w)) options.input_shape = {3, kImage, kImage};
  if (is_vit(w)) options.num_classes = kVitClasses;
  options.depth = kDepth;
  options.width = w.model == "llama" ? 64 : 128;
  if (w.model == "llama") options.decoder = {8, 4, 96};
  if (w.top_k > 0) options.moe.top_k = w.top_k;
  options.moe_groups = groups;
  return options;
}

std::shared_ptr<runtime::ZooModel> seeded(const Workload& w, int64_t groups = 1) {
  torch::manual_seed(11);
  return runtime::make_model(w.model, options_of(w, groups));
}

runtime::WorkerOptimizer adamw() { return {"adamw", 0.01, 0.0, 0.9, 0.999, 1e-8, 0.01}; }

runtime::SyntheticBatch batch_of(const Workload& w) {
  const auto model = seeded(w);
  torch::manual_seed(23);
  return runtime::make_synthetic_batch(*model, options_of(w), kBatch, w.loss);
}

// The weights after kSteps, and the first step's loss (every rank reports the whole).
struct Trained {
  Parameters parameters;
  double first_loss = 0;
  int64_t first_dropped = 0;  // bert_moe: the choices its mixture dropped for capacity
};

// bert_moe's mixture routes the batch in `groups` capacity groups, as `groups` ranks do.
Trained one_process(const Workload& w, int64_t groups = 1) {
  const auto model = seeded(w, groups);
  const auto batch = batch_of(w);
  auto optimizer = runtime::make_optimizer(adamw(), model->parameters());
  Trained out;
  for (int step = 0; step < kSteps; ++step) {
    optimizer->zero_grad();
    auto loss = runtime::training_loss(w.loss, model->forward(batch.input), batch.target);
    if (const auto balance = model->auxiliary_loss(); balance.defined()) {
      loss = loss + runtime::kLoadBalanceLossWeight * balance;
      if (step == 0) out.first_dropped = runtime::mixtures_of(*model)[0]->dropped_choices();
    }
    if (step == 0) out.first_loss = loss.item<double>();
    loss.backward();
    optimizer->step();
  }
  for (const auto& item : model->named_parameters()) {
    out.parameters[item.key()] = item.value().detach();
  }
  return out;
}

spmd::OperatorGraph graph_of(const Workload& w, int ranks) {
  spmd::TransformerShape shape;
  shape.batch = kBatch;
  shape.tokens = kTokens;
  shape.depth = kDepth;
  shape.bytes_per_element = 8;  // the tests train in float64
  if (w.model == "llama") {
    shape.width = 64;
    shape.heads = 8;
    shape.kv_heads = 4;
    shape.feed_forward = runtime::llama_feed_forward_width(64);
    shape.vocabulary = 96;
  } else {
    shape.family = spmd::TransformerFamily::kEncoder;
    if (is_vit(w)) {
      shape.family = spmd::TransformerFamily::kVision;
      shape.tokens = kVitTokens;
      shape.patch_pixels = 3 * 16 * 16;
      shape.classes = kVitClasses;
    }
    shape.experts = w.top_k > 0 ? 4 : 0;
    shape.top_k = std::max<int64_t>(w.top_k, 1);
    shape.width = 128;
    shape.heads = shape.kv_heads = 2;
    shape.feed_forward = 512;
    shape.vocabulary = runtime::kBertVocabulary;
  }
  return spmd::transformer_graph(shape, ranks);
}
spmd::OperatorGraph llama_graph(int ranks) { return graph_of(kLlama, ranks); }

spmd::SpmdCosts costs_of(double latency_s, double bytes_per_s) {
  spmd::SpmdCosts costs;
  costs.flops_per_s = 1e9;
  for (auto& fit : costs.fits) fit = {latency_s, bytes_per_s};
  return costs;
}

// The plan as `harness spmd --out` writes it, read back as a rank reads it.
std::vector<runtime::SpmdStep> steps_of(const spmd::OperatorGraph& graph,
                                        const spmd::Strategy& strategy) {
  const auto plans = spmd::operator_plans(graph, costs_of(1e-4, 1e9), strategy);
  return runtime::read_spmd_steps(spmd::spmd_plan_json(plans, {}));
}

// Signature (i x stride + offset) mod count of each operator: a mixture no search would pick.
spmd::Strategy arbitrary(const spmd::OperatorGraph& graph, int stride, int offset) {
  spmd::Strategy strategy;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const int count = static_cast<int>(graph.operators[i].signatures.size());
    strategy.push_back(static_cast<int>((i * stride + offset) % count));
  }
  return strategy;
}

// Every rank trains the plan from the one whole model; the whole weights as rank 0 gathers them,
// and the first loss the last rank reports.
Trained train_spmd(int ranks, const std::vector<runtime::SpmdStep>& steps,
                   const Workload& w = kLlama) {
  const auto whole = seeded(w);
  const auto batch = batch_of(w);
  Trained gathered;
  const auto train = [&](int rank, runtime::Communicator& group) {
    runtime::SpmdTransformer model(*whole, steps, group, w.loss);
    auto optimizer = runtime::make_optimizer(adamw(), model.parameters());
    for (int step = 0; step < kSteps; ++step) {
      optimizer->zero_grad();
      const double loss = model.train_step(batch.input, batch.target);
      if (step == 0 && rank == ranks - 1) gathered.first_loss = loss;
      optimizer->step();
    }
    auto parameters = model.whole_parameters();
    if (rank == 0) gathered.parameters = std::move(parameters);
  };
  for (const auto& error : runtime_test::on_every_rank(ranks, train)) EXPECT_EQ(error, "");
  return gathered;
}

// Relative 1e-9; `absolute` for weights whose exact gradient is zero (bert's key bias: softmax
// ignores it), whose rounding noise AdamW's eps turns into steps of about lr x noise / eps.
void expect_equal(const Trained& got_run, const Trained& want_run, const std::string& what,
                  double absolute = 1e-12) {
  EXPECT_NEAR(got_run.first_loss, want_run.first_loss, 1e-12) << what;
  const Parameters& got = got_run.parameters;
  const Parameters& want = want_run.parameters;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, tensor] : want) {
    ASSERT_TRUE(got.count(name)) << what << ": " << name;
    EXPECT_TRUE(torch::allclose(got.at(name), tensor, 1e-9, absolute))
        << what << ": " << name << " differs by "
        << (got.at(name) - tensor).abs().max().item<double>();
  }
}

std::string strategy_text(const spmd::OperatorGraph& graph, const spmd::Strategy& strategy) {
  std::string text;
  for (size_t i = 0; i < strategy.size(); ++i) {
    text += std::string(spmd::to_text(graph.operators[i].signatures[strategy[i]].kind)) + " ";
  }
  return text;
}

TEST(SpmdTransformer, SearchedStrategiesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  const Trained want = one_process(kLlama);
  for (int ranks : {2, 4}) {
    const auto graph = llama_graph(ranks);
    std::set<spmd::Strategy> found;
    for (const auto& costs : {costs_of(1.0, 1e3), costs_of(2e-4, 1e9), costs_of(0, 1e15)}) {
      const auto strategy = spmd::search_strategy(graph, costs).strategy;
      found.insert(strategy);
      expect_equal(train_spmd(ranks, steps_of(graph, strategy)), want,
                   std::to_string(ranks) + " ranks: " + strategy_text(graph, strategy));
    }
    EXPECT_GE(found.size(), 2u) << "the links' costs changed no strategy";
  }
}

TEST(SpmdTransformer, DdpAndMegatronStrategiesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  const Trained want = one_process(kLlama);
  for (int ranks : {2, 4}) {
    const auto graph = llama_graph(ranks);
    for (auto system : {spmd::ReferenceSystem::kData, spmd::ReferenceSystem::kTensor}) {
      const auto strategy = spmd::reference_strategy(graph, system);
      ASSERT_TRUE(strategy);
      expect_equal(train_spmd(ranks, steps_of(graph, *strategy)), want,
                   std::string(spmd::reference_name(system)) + " at " + std::to_string(ranks));
    }
  }
}

// Between them the mixtures change forms by every collective, forward and backward. At 3 ranks
// nothing but the vocabulary divides (batch 4, tokens 8, heads 8): the fused projections keep
// one row group.
TEST(SpmdTransformer, ArbitraryMixturesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  const Trained want = one_process(kLlama);
  std::set<std::pair<spmd::Collective, bool>> used;  // collective, backward
  for (int ranks : {2, 3, 4}) {
    const auto graph = llama_graph(ranks);
    for (const auto& [stride, offset] : {std::pair{1, 0}, {1, 1}, {3, 2}, {5, 1}, {7, 3}}) {
      const auto strategy = arbitrary(graph, stride, offset);
      for (const auto& plan : spmd::operator_plans(graph, costs_of(1e-4, 1e9), strategy)) {
        for (const auto& input : plan.inputs) {
          used.insert({input.forward, false});
          used.insert({input.backward, true});
        }
      }
      expect_equal(train_spmd(ranks, steps_of(graph, strategy)), want,
                   std::to_string(ranks) + " ranks: " + strategy_text(graph, strategy));
    }
  }
  for (auto collective : {spmd::Collective::kAllGather, spmd::Collective::kAllReduce,
                          spmd::Collective::kReduceScatter, spmd::Collective::kAllToAll}) {
    for (bool backward : {false, true}) {
      EXPECT_TRUE(used.count({collective, backward}))
          << spmd::collective_name(collective) << (backward ? " backward" : " forward");
    }
  }
}

// What the plan says one rank hands each kind of collective in an iteration, in
// CountingCommunicator's accounting: every form change between operators, forward and backward
// (an all-gather counts this rank's chunk, an all-to-all what leaves it), each operator's own
// collectives, the summed gradients, and a shard's part of the loss summed with them.
runtime::CollectivePayload planned_payload(const spmd::OperatorGraph& graph,
                                           const spmd::Strategy& strategy) {
  const double n = graph.ranks;
  double all_reduce = 0, all_gather = 0, reduce_scatter = 0, exchanged = 0;
  const auto add = [&](spmd::Collective collective, double bytes) {
    if (collective == spmd::Collective::kAllReduce) all_reduce += bytes;
    if (collective == spmd::Collective::kAllGather) all_gather += bytes / n;
    if (collective == spmd::Collective::kReduceScatter) reduce_scatter += bytes;
    if (collective == spmd::Collective::kAllToAll) exchanged += bytes / n * (n - 1) / n;
  };
  for (const auto& plan : spmd::operator_plans(graph, costs_of(1e-4, 1e9), strategy)) {
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      const double bytes = graph.operators[plan.op->inputs[i]].output_bytes;
      add(plan.inputs[i].forward, bytes);
      add(plan.inputs[i].backward, bytes);
    }
    for (const auto& inner : plan.signature->inner) {
      // An all-to-all's buffer is one rank's (nccl-tests' sense), not the whole tensor's.
      const double whole = inner.collective == spmd::Collective::kAllToAll ? inner.buffer_bytes * n
                                                                           : inner.buffer_bytes;
      for (int call = 0; call < inner.calls; ++call) add(inner.collective, whole);
    }
    all_reduce += plan.signature->synced_gradient_bytes;
    if (plan.op->kind == spmd::OperatorKind::kLoss &&
        spmd::sums_weight_gradients(plan.signature->kind)) {
      all_reduce += sizeof(double);  // a shard's part of the loss, summed with the gradients
    }
  }
  return {static_cast<int64_t>(all_reduce), static_cast<int64_t>(all_gather),
          static_cast<int64_t>(reduce_scatter), 0, static_cast<int64_t>(exchanged)};
}

// The parameter bytes the plan gives a rank: each operator's share of its weights.
double planned_parameter_bytes(const spmd::OperatorGraph& graph, const spmd::Strategy& strategy) {
  double bytes = 0;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const auto& op = graph.operators[i];
    bytes += op.parameter_bytes * op.signatures[strategy[i]].parameter_share;
  }
  return bytes;
}

struct RankCount {
  runtime::CollectivePayload payload;  // one iteration's
  int64_t parameter_bytes = 0;
};

std::vector<RankCount> counted_ranks(int ranks, const std::vector<runtime::SpmdStep>& steps,
                                     const Workload& w = kLlama) {
  const auto whole = seeded(w);
  const auto batch = batch_of(w);
  std::vector<RankCount> counts(ranks);
  const auto count = [&](int rank, runtime::Communicator& group) {
    runtime::CountingCommunicator counted(group);
    runtime::SpmdTransformer decoder(*whole, steps, counted);
    decoder.train_step(batch.input, batch.target);
    counts[rank].payload = counted.payload();
    for (const auto& p : decoder.parameters()) counts[rank].parameter_bytes += p.numel() * 8;
  };
  for (const auto& error : runtime_test::on_every_rank(ranks, count)) EXPECT_EQ(error, "");
  return counts;
}

// bert's strategies: every cross-entropy case at 2 ranks, a few at 4 (its 2 heads stay whole
// there), and mse's mixtures at 2 (its class head split by the "vocab" loss). Its vocabulary of
// 30522 rows makes each run cost seconds: the cases are chosen, not swept.
std::vector<std::pair<Workload, int>> bert_cases() {
  const Workload entropy{"bert", "cross_entropy"}, mse{"bert", "mse"};
  return {{entropy, 2}, {entropy, 4}, {mse, 2}};
}

std::vector<spmd::Strategy> bert_strategies(const spmd::OperatorGraph& graph, bool every) {
  std::vector<spmd::Strategy> strategies = {arbitrary(graph, 1, 1), arbitrary(graph, 3, 2)};
  if (!every) return strategies;
  strategies.push_back(arbitrary(graph, 1, 2));  // the words' and positions' rows split
  strategies.push_back(spmd::search_strategy(graph, costs_of(2e-4, 1e9)).strategy);
  strategies.push_back(spmd::search_strategy(graph, costs_of(0, 1e15)).strategy);
  strategies.push_back(*spmd::reference_strategy(graph, spmd::ReferenceSystem::kData));
  // Megatron's needs the heads to divide: bert's 2 do not over 4 ranks.
  if (const auto tensor = spmd::reference_strategy(graph, spmd::ReferenceSystem::kTensor)) {
    strategies.push_back(*tensor);
  }
  return strategies;
}

// bert: biases added once after a row split, LayerNorms, non-causal heads, the pooler's first
// token and its tanh, positions after the words in one table, the class head split.
TEST(SpmdTransformer, BertStrategiesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  std::set<std::tuple<std::string, spmd::OperatorKind, spmd::SignatureKind>> used;
  for (const auto& [w, ranks] : bert_cases()) {
    const Trained want = one_process(w);
    const auto graph = graph_of(w, ranks);
    const bool every = w.loss == "cross_entropy" && ranks == 2;
    for (const auto& strategy : bert_strategies(graph, every)) {
      for (size_t i = 0; i < strategy.size(); ++i) {
        const auto& op = graph.operators[i];
        used.insert({w.loss, op.kind, op.signatures[strategy[i]].kind});
      }
      expect_equal(
          train_spmd(ranks, steps_of(graph, strategy), w), want,
          w.loss + ", " + std::to_string(ranks) + " ranks: " + strategy_text(graph, strategy),
          1e-10);
    }
  }
  // Among them: a row split's bias added once, the vocabulary-split lookup of words and
  // positions, the class head split under both losses.
  using Op = spmd::OperatorKind;
  using Sig = spmd::SignatureKind;
  for (const std::string loss : {"cross_entropy", "mse"}) {
    EXPECT_TRUE(used.count({loss, Op::kLinear, Sig::kRow})) << loss;
    EXPECT_TRUE(used.count({loss, Op::kLoss, Sig::kVocab})) << loss;
  }
  EXPECT_TRUE(used.count({"cross_entropy", Op::kEmbedding, Sig::kVocab}));
}

// The strategies that run bert_moe's one mixture under each of its signatures, every other
// operator on a batch shard (DDP's strategy); the index of the mixture's operator.
std::pair<std::vector<spmd::Strategy>, size_t> mixture_strategies(
    const spmd::OperatorGraph& graph) {
  const auto& ops = graph.operators;
  const auto mixture =
      static_cast<size_t>(std::find_if(ops.begin(), ops.end(),
                                       [](const spmd::Operator& op) {
                                         return op.kind == spmd::OperatorKind::kExperts;
                                       }) -
                          ops.begin());
  const auto data = *spmd::reference_strategy(graph, spmd::ReferenceSystem::kData);
  std::vector<spmd::Strategy> strategies;
  for (size_t s = 0; s < ops.at(mixture).signatures.size(); ++s) {
    strategies.push_back(data);
    strategies.back()[mixture] = static_cast<int>(s);
  }
  return {strategies, mixture};
}

// bert_moe's mixture as a batch shard, as experts spread by all-to-all, whole, and with every
// expert's hidden layer split, under GShard's top-2 and Switch's top-1, choices dropped for
// capacity: the ranks train as one process that routes the batch in one capacity group a rank.
TEST(SpmdTransformer, MixtureStrategiesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  std::set<spmd::SignatureKind> used;
  for (const auto& [w, ranks] : {std::pair{kGshard, 2}, {kSwitch, 2}, {kGshard, 4}}) {
    const Trained want = one_process(w, ranks);
    EXPECT_GT(want.first_dropped, 0) << "capacity dropped no choice";
    const auto graph = graph_of(w, ranks);
    auto [strategies, mixture] = mixture_strategies(graph);
    if (ranks == 2 && w.top_k == 2) {
      strategies.push_back(spmd::search_strategy(graph, costs_of(2e-4, 1e9)).strategy);
      strategies.push_back(arbitrary(graph, 3, 2));
    }
    for (const auto& strategy : strategies) {
      used.insert(graph.operators[mixture].signatures[strategy[mixture]].kind);
      expect_equal(train_spmd(ranks, steps_of(graph, strategy), w), want,
                   "top-" + std::to_string(w.top_k) + ", " + std::to_string(ranks) +
                       " ranks: " + strategy_text(graph, strategy),
                   1e-10);
    }
  }
  EXPECT_EQ(used, (std::set<spmd::SignatureKind>{
                      spmd::SignatureKind::kData, spmd::SignatureKind::kExperts,
                      spmd::SignatureKind::kReplicated, spmd::SignatureKind::kColumn}));
}

// HiDup's profiled compute: every operator of bert_moe under each of its signatures (a plan a
// signature index, as `compute: measured` times them) runs alone on one rank's part with its
// peers left out, the mixture's all-to-alls under `experts` included, and takes time forward and
// backward where it computes; timing leaves the weights as they were.
TEST(SpmdTransformer, TimesEveryOperatorAloneUnderEachSignature) {
  const auto graph = graph_of(kGshard, 2);
  const auto model = seeded(kGshard);
  const auto batch = batch_of(kGshard);
  runtime::PeerlessGroup group(0, 2);
  std::set<spmd::SignatureKind> mixture_timed;
  for (int pass = 0; pass < 4; ++pass) {
    spmd::Strategy strategy;
    for (const auto& op : graph.operators) {
      strategy.push_back(pass < static_cast<int>(op.signatures.size()) ? pass : 0);
    }
    const auto steps = steps_of(graph, strategy);
    runtime::SpmdTransformer rank(*model, steps, group, kGshard.loss);
    const auto before = rank.parameters().front().clone();
    const auto times = rank.time_operators(batch.input, batch.target, 2);
    ASSERT_EQ(times.size(), steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == spmd::OperatorKind::kTokens) continue;  // the ids, no work
      EXPECT_GT(times[i].forward, 0) << steps[i].name;
      EXPECT_GT(times[i].backward, 0) << steps[i].name;
      if (steps[i].kind == spmd::OperatorKind::kExperts) mixture_timed.insert(steps[i].signature);
    }
    EXPECT_TRUE(torch::equal(rank.parameters().front(), before));
  }
  EXPECT_EQ(mixture_timed, (std::set<spmd::SignatureKind>{
                               spmd::SignatureKind::kData, spmd::SignatureKind::kExperts,
                               spmd::SignatureKind::kReplicated, spmd::SignatureKind::kColumn}));
}

// Memory and bytes against the formula: each rank holds the parameters and hands each collective
// the bytes the plan priced.
TEST(SpmdTransformer, EveryRankHoldsAndMovesWhatThePlanPriced) {
  const runtime_test::DoubleDefault float64;
  for (int ranks : {2, 4}) {
    const auto graph = llama_graph(ranks);
    std::vector<spmd::Strategy> strategies = {
        spmd::search_strategy(graph, costs_of(2e-4, 1e9)).strategy,
        *spmd::reference_strategy(graph, spmd::ReferenceSystem::kTensor)};
    for (const auto& [stride, offset] : {std::pair{1, 1}, {3, 2}, {7, 3}}) {
      strategies.push_back(arbitrary(graph, stride, offset));
    }
    for (const auto& strategy : strategies) {
      const auto want = planned_payload(graph, strategy);
      const std::string what = std::to_string(ranks) + " ranks: " + strategy_text(graph, strategy);
      for (const auto& rank : counted_ranks(ranks, steps_of(graph, strategy))) {
        EXPECT_EQ(rank.parameter_bytes,
                  static_cast<int64_t>(planned_parameter_bytes(graph, strategy)))
            << what;
        const auto& got = rank.payload;
        EXPECT_EQ(got.all_reduce, want.all_reduce) << what;
        EXPECT_EQ(got.all_gather, want.all_gather) << what;
        EXPECT_EQ(got.reduce_scatter, want.reduce_scatter) << what;
        EXPECT_EQ(got.point_to_point, want.point_to_point) << what;
      }
    }
  }
}

// bert_moe's one mixture under each signature, every other operator on batch shards: each rank
// all-reduces, gathers and scatters the bytes the plan priced; its all-to-alls stay within the
// plan's bound (the search prices every expert full, 10 rows here, and the routed tokens fill
// less), besides the 4 experts' int64 row counts each dispatch exchanges first, half of them
// leaving; and the ranks' parameters add up to the plan's share a rank times the ranks (a column
// split's second bias is rank 0's alone).
TEST(SpmdTransformer, MixturesHoldAndMoveWhatThePlanPriced) {
  const runtime_test::DoubleDefault float64;
  constexpr int kRanks = 2;
  constexpr int64_t kRowCountsLeaving = 4 * 8 / kRanks;
  const auto graph = graph_of(kGshard, kRanks);
  const auto [strategies, mixture] = mixture_strategies(graph);
  for (const auto& strategy : strategies) {
    const auto want = planned_payload(graph, strategy);
    const std::string what = strategy_text(graph, strategy);
    int64_t parameter_bytes = 0;
    for (const auto& rank : counted_ranks(kRanks, steps_of(graph, strategy), kGshard)) {
      const auto& got = rank.payload;
      EXPECT_EQ(got.all_reduce, want.all_reduce) << what;
      EXPECT_EQ(got.all_gather, want.all_gather) << what;
      EXPECT_EQ(got.reduce_scatter, want.reduce_scatter) << what;
      EXPECT_LE(got.point_to_point, want.point_to_point + kRowCountsLeaving) << what;
      EXPECT_GE(got.point_to_point, want.point_to_point / 2) << what;  // the tokens do travel
      parameter_bytes += rank.parameter_bytes;
    }
    EXPECT_EQ(parameter_bytes,
              static_cast<int64_t>(kRanks * planned_parameter_bytes(graph, strategy)))
        << what;
  }
}

// The graph holds the zoo's parameters, operator by operator: their bytes add up to the model's.
TEST(SpmdTransformer, EachGraphHoldsItsModelsParameters) {
  for (const Workload& w : {kLlama, Workload{"bert"}, kGshard, kVit, kVitMoe}) {
    double bytes = 0;
    for (const auto& op : graph_of(w, 2).operators) bytes += op.parameter_bytes;
    EXPECT_EQ(static_cast<int64_t>(bytes) / 8, runtime::parameter_count(*seeded(w))) << w.model;
  }
}

// ViT's patches projected, its class token and positions, pre-norm blocks with LayerNorm's eps
// 1e-6, the head's norm and its classifier of the class token; vit_moe's mixture under each
// signature: the ranks train as one process.
TEST(SpmdTransformer, VitStrategiesTrainAsOneProcess) {
  const runtime_test::DoubleDefault float64;
  std::set<std::pair<std::string, spmd::SignatureKind>> used;
  for (const auto& [w, ranks] : {std::pair{kVit, 2}, {kVit, 4}, {kVitMoe, 2}}) {
    const Trained want = one_process(w, ranks);
    const auto graph = graph_of(w, ranks);
    std::vector<spmd::Strategy> strategies = {
        spmd::search_strategy(graph, costs_of(2e-4, 1e9)).strategy,
        spmd::search_strategy(graph, costs_of(0, 1e15)).strategy, arbitrary(graph, 1, 1),
        arbitrary(graph, 3, 2)};
    if (w.top_k > 0) strategies = mixture_strategies(graph).first;
    for (const auto& strategy : strategies) {
      for (size_t i = 0; i < strategy.size(); ++i) {
        used.insert({graph.operators[i].name, graph.operators[i].signatures[strategy[i]].kind});
      }
      expect_equal(
          train_spmd(ranks, steps_of(graph, strategy), w), want,
          w.model + ", " + std::to_string(ranks) + " ranks: " + strategy_text(graph, strategy),
          1e-10);
    }
  }
  // Among them the tables and the projection split by features, the head split.
  EXPECT_TRUE(used.count({"embeddings", spmd::SignatureKind::kFeatures}));
  EXPECT_TRUE(used.count({"embeddings.projection", spmd::SignatureKind::kColumn}));
  EXPECT_TRUE(used.count({"head.classifier", spmd::SignatureKind::kColumn}) ||
              used.count({"head.classifier", spmd::SignatureKind::kRow}));
}

}  // namespace spmd_transformer_test
