// The zoo's transformers as operator graphs (planner/spmd/transformer_graph.h): their layers,
// FLOPs and parameter bytes against the zoo's own formulas, the signatures offered where sizes
// divide, and the search on them against enumeration and against Megatron's known answer.
#include <gtest/gtest.h>

#include <set>

#include "planner/spmd/reference_strategies.h"
#include "planner/spmd/strategy_search.h"
#include "planner/spmd/transformer_graph.h"

namespace harness::spmd {
namespace {

// llama's defaults at 2 blocks (runtime/models/llama.h): width 512, 8 heads, SwiGLU 1536.
TransformerShape small_llama() {
  TransformerShape shape;
  shape.batch = 4;
  shape.tokens = 128;
  shape.width = 512;
  shape.depth = 2;
  shape.heads = shape.kv_heads = 8;
  shape.feed_forward = 1536;
  shape.vocabulary = 32000;
  return shape;
}

double parameter_bytes(const OperatorGraph& graph) {
  double bytes = 0;
  for (const Operator& op : graph.operators) bytes += op.parameter_bytes;
  return bytes;
}

std::set<std::string> names_of(const Operator& op) {
  std::set<std::string> names;
  for (const Signature& signature : op.signatures) names.insert(to_text(signature.kind));
  return names;
}

const Operator& named(const OperatorGraph& graph, const std::string& name) {
  for (const Operator& op : graph.operators) {
    if (op.name == name) return op;
  }
  throw std::runtime_error("no operator " + name);
}

TEST(SpmdTransformerGraph, LlamaHasTheZoosLayersAndParameters) {
  const OperatorGraph graph = transformer_graph(small_llama(), 2);
  // tokens, embedding; 10 operators a block; norm, lm_head, loss.
  ASSERT_EQ(graph.operators.size(), 2u + 10 * 2 + 3);
  // Embedding and head 32000 x 512 each; a block: qkv 512 x 1536, output 512 x 512, gate_up
  // 512 x 3072, down 1536 x 512, two RMSNorms of 512; the final norm 512.
  const double block = 512.0 * 1536 + 512 * 512 + 512 * 3072 + 1536 * 512 + 2 * 512;
  EXPECT_DOUBLE_EQ(parameter_bytes(graph), 4 * (2 * 32000.0 * 512 + 2 * block + 512));
  // A projection's FLOPs: 2 x tokens x in x out; attention 4 x batch x tokens^2 x width.
  EXPECT_DOUBLE_EQ(named(graph, "layers.0.qkv").forward_flops, 2.0 * 512 * 512 * 1536);
  EXPECT_DOUBLE_EQ(named(graph, "layers.1.attention").forward_flops, 4.0 * 4 * 128 * 128 * 512);
  EXPECT_EQ(names_of(named(graph, "layers.0.qkv")),
            (std::set<std::string>{"data", "sequence", "replicated", "column"}));
  EXPECT_EQ(names_of(named(graph, "layers.0.down")),
            (std::set<std::string>{"data", "sequence", "replicated", "row"}));
  EXPECT_EQ(names_of(named(graph, "layers.0.attention")),
            (std::set<std::string>{"data", "replicated", "heads"}));
  EXPECT_EQ(names_of(named(graph, "loss")),
            (std::set<std::string>{"data", "sequence", "replicated", "vocab"}));
}

// Megatron's strategy is priced beside the searched one where the harness runs it (llama, bert),
// whatever the graph's operators are called: not on ViT's graph, even with its patches renamed.
TEST(SpmdTransformerGraph, PricesMegatronWhereTheHarnessRunsItWhateverTheNames) {
  OperatorGraph llama = transformer_graph(small_llama(), 2);
  llama.operators.front().name = "patches";
  const auto megatron = reference_strategy(llama, ReferenceSystem::kTensor);
  ASSERT_TRUE(megatron.has_value());
  const auto index = [&](const std::string& name) {
    for (size_t i = 0; i < llama.operators.size(); ++i) {
      if (llama.operators[i].name == name) return i;
    }
    throw std::runtime_error("no operator " + name);
  };
  const auto chosen = [&](const std::string& name) {
    const size_t i = index(name);
    return std::string(to_text(llama.operators[i].signatures[(*megatron)[i]].kind));
  };
  EXPECT_EQ(chosen("layers.0.qkv"), "column");
  EXPECT_EQ(chosen("layers.0.down"), "row");
  TransformerShape vit;
  vit.family = TransformerFamily::kVision;
  vit.batch = 4;
  vit.tokens = 4 * 4 + 1;  // 64 x 64 images in 16 x 16 patches, and the class token
  vit.patch_pixels = 3 * 16 * 16;
  vit.width = 128;
  vit.depth = 2;
  vit.heads = vit.kv_heads = 2;
  vit.feed_forward = 512;
  vit.vocabulary = 1;
  vit.classes = 10;
  OperatorGraph vision = transformer_graph(vit, 2);
  vision.operators.front().name = "pixels";
  EXPECT_FALSE(reference_strategy(vision, ReferenceSystem::kTensor).has_value());
  EXPECT_TRUE(reference_strategy(vision, ReferenceSystem::kData).has_value());
}

TEST(SpmdTransformerGraph, OffersOnlySplitsTheSizesDivide) {
  TransformerShape shape = small_llama();
  shape.batch = 3;
  shape.heads = 6;
  shape.kv_heads = 3;
  shape.width = 384;
  const OperatorGraph graph = transformer_graph(shape, 2);
  EXPECT_EQ(names_of(named(graph, "layers.0.qkv")),
            (std::set<std::string>{"sequence", "replicated"}));
  EXPECT_EQ(names_of(named(graph, "layers.0.attention")), (std::set<std::string>{"replicated"}));
  EXPECT_THROW(transformer_graph(shape, 0), std::invalid_argument);
  shape.kv_heads = 4;
  EXPECT_THROW(transformer_graph(shape, 2), std::invalid_argument);
}

TEST(SpmdTransformerGraph, BertMoeHasItsMixturesAndTheirExpertSignatures) {
  TransformerShape shape;
  shape.family = TransformerFamily::kEncoder;
  shape.batch = 8;
  shape.tokens = 64;
  shape.width = 128;
  shape.depth = 2;
  shape.heads = shape.kv_heads = 2;
  shape.feed_forward = 512;
  shape.vocabulary = 30522;
  shape.experts = 4;
  shape.top_k = 2;
  const OperatorGraph graph = transformer_graph(shape, 4);
  const Operator& mixture = named(graph, "encoder.layer.1.experts");
  // Router 128 x 4 (no bias); four experts of 128 x 512 + 512 and 512 x 128 + 128.
  const double expert = 128.0 * 512 + 512 + 512 * 128 + 128, router = 128.0 * 4;
  EXPECT_DOUBLE_EQ(mixture.parameter_bytes, 4 * (router + 4 * expert));
  // Routed in one capacity group per batch shard: no token shard.
  EXPECT_EQ(names_of(mixture), (std::set<std::string>{"data", "experts", "replicated", "column"}));
  for (const Signature& signature : mixture.signatures) {
    if (signature.kind == SignatureKind::kColumn) {
      // The router whole, its gradient a partial sum; a quarter of each expert.
      EXPECT_DOUBLE_EQ(signature.synced_gradient_bytes, 4 * router);
      EXPECT_DOUBLE_EQ(signature.parameter_share * mixture.parameter_bytes, 4 * (router + expert));
    }
    if (signature.kind != SignatureKind::kExperts) continue;
    // One expert a rank; the router's gradient summed; dispatch and combine both ways, each
    // rank's 8 x 64 / 4 tokens x top-2 x capacity 1.25 x 128 floats.
    EXPECT_DOUBLE_EQ(signature.synced_gradient_bytes, 4 * router);
    ASSERT_EQ(signature.inner.size(), 1u);
    EXPECT_EQ(signature.inner[0].calls, 4);
    EXPECT_DOUBLE_EQ(signature.inner[0].buffer_bytes, 128.0 * 2 * 1.25 * 128 * 4);
  }
  EXPECT_TRUE(names_of(mixture).count("experts"));
  EXPECT_FALSE(named(graph, "encoder.layer.0.fc1").signatures.empty());
  EXPECT_EQ(graph.operators.back().name, "loss");
  // No nonlinear step takes partial sums: the embeddings' LayerNorm and the pooler's tanh are
  // operators of their own, which offer no partial input.
  for (const char* nonlinear : {"embeddings_norm", "pooler_tanh"}) {
    for (const Signature& signature : named(graph, nonlinear).signatures) {
      EXPECT_NE(signature.inputs[0], kPartial) << nonlinear << " " << to_text(signature.kind);
    }
  }
  // tokens, embeddings, their norm; 10 operators a dense block, 8 a mixture's; pooler, its tanh,
  // classifier, loss.
  EXPECT_EQ(graph.operators.size(), 3u + 10 + 8 + 4);
}

SpmdCosts gloo_like_costs() {
  SpmdCosts costs;
  costs.flops_per_s = 80e9;
  for (auto& fit : costs.fits) fit = {2e-4, 1e9};
  return costs;
}

TEST(SpmdTransformerGraph, SearchOnAPrefixEqualsEnumeration) {
  OperatorGraph graph = transformer_graph(small_llama(), 2);
  graph.operators.resize(9);  // tokens .. the first block's gate_up
  const SearchResult found = search_strategy(graph, gloo_like_costs());
  const SearchResult best = enumerate_strategies(graph, gloo_like_costs());
  EXPECT_NEAR(found.seconds, best.seconds, 1e-12 * best.seconds);
}

TEST(SpmdTransformerGraph, CutsStayNarrowAndFastLinksSplitTheBatch) {
  const OperatorGraph graph = transformer_graph(small_llama(), 4);
  SpmdCosts costs = gloo_like_costs();
  for (auto& fit : costs.fits) fit = {1e-6, 1e12};
  const SearchResult found = search_strategy(graph, costs);
  EXPECT_LE(found.widest_frontier, 3);
  // Where collectives cost next to nothing, every operator with work splits its batch (or its
  // tokens): nothing runs whole on every rank.
  for (size_t i = 1; i < graph.operators.size(); ++i) {
    const Signature& chosen = graph.operators[i].signatures[found.strategy[i]];
    EXPECT_NE(chosen.kind, SignatureKind::kReplicated) << graph.operators[i].name;
  }
}

}  // namespace
}  // namespace harness::spmd
