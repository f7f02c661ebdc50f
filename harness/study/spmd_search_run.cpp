#include "harness/study/spmd_search_run.h"

#include <chrono>
#include <stdexcept>

#include "common/input_error.h"
#include "planner/spmd/reference_strategies.h"

namespace harness {

SpmdModel spmd_model_of(const ModelConfig& m, int64_t global_batch) {
  const bool image = m.input_shape.size() == 3;
  return {m.name,
          global_batch,
          m.input_shape.empty() || image ? 0 : m.input_shape.at(0),
          m.width,
          m.depth,
          m.decoder,
          m.moe,
          m.num_classes,
          image ? std::vector<int64_t>(m.input_shape.begin(), m.input_shape.end())
                : std::vector<int64_t>{}};
}

int64_t zoo_tokens(const std::string& model, int64_t tokens) {
  return tokens > 0 ? tokens : runtime::find_model(model)->default_input_shape.at(0);
}

namespace {

// ViT's tokens: its patches (runtime::kVitPatch square) and the class token.
void set_vision_shape(const SpmdModel& m, spmd::TransformerShape& s) {
  const std::vector<int64_t> image =
      m.image.empty() ? runtime::find_model(m.name)->default_input_shape : m.image;
  s.family = spmd::TransformerFamily::kVision;
  s.tokens = (image.at(1) / runtime::kVitPatch) * (image.at(2) / runtime::kVitPatch) + 1;
  s.patch_pixels = image.at(0) * runtime::kVitPatch * runtime::kVitPatch;
  s.vocabulary = 1;  // none
  s.classes = m.classes > 0 ? m.classes : 1000;
}

}  // namespace

spmd::TransformerShape zoo_transformer_shape(const SpmdModel& m) {
  const bool decoder = m.name == "llama";
  spmd::TransformerShape s;
  s.family = decoder ? spmd::TransformerFamily::kDecoder : spmd::TransformerFamily::kEncoder;
  s.batch = m.batch;
  s.tokens = zoo_tokens(m.name, m.tokens);
  s.width = runtime::transformer_width(m.name, m.width);
  s.depth = runtime::transformer_depth(m.name, m.depth);
  s.heads = m.decoder.heads > 0 ? m.decoder.heads : s.width / runtime::kLlamaHeadWidth;
  s.kv_heads = m.decoder.kv_heads > 0 ? m.decoder.kv_heads : s.heads;
  s.feed_forward = decoder ? runtime::llama_feed_forward_width(s.width) : 4 * s.width;
  s.vocabulary = decoder ? (m.decoder.vocab > 0 ? m.decoder.vocab : runtime::kLlamaVocabulary)
                         : runtime::kBertVocabulary;
  if (m.classes > 0) s.classes = m.classes;
  if (runtime::is_vision_transformer(m.name)) set_vision_shape(m, s);
  if (runtime::is_mixture_of_experts(m.name)) {
    s.experts = m.moe.experts;
    s.top_k = m.moe.top_k;
    s.capacity_factor = m.moe.capacity_factor;
    s.moe_every = m.moe.every;
  }
  return s;
}

std::vector<spmd::StrategyRow> SpmdSearch::strategy_rows() const {
  const spmd::SpmdCosts& costs = inputs.costs;
  std::vector<spmd::StrategyRow> rows{{"searched", strategy_cost(graph, costs, found.strategy)}};
  for (auto system : {spmd::ReferenceSystem::kData, spmd::ReferenceSystem::kTensor,
                      spmd::ReferenceSystem::kExperts}) {
    if (const auto strategy = reference_strategy(graph, system)) {
      rows.push_back({spmd::reference_name(system), strategy_cost(graph, costs, *strategy)});
    }
  }
  return rows;
}

std::vector<spmd::OperatorPlan> SpmdSearch::operator_plans() const {
  return spmd::operator_plans(graph, inputs.costs, found.strategy);
}

nlohmann::json SpmdSearch::plan_document(nlohmann::json inputs_json) const {
  nlohmann::json plan = spmd::spmd_plan_json(operator_plans(), strategy_rows());
  plan["inputs"] = std::move(inputs_json);
  plan["search"] = {{"states", found.states}, {"milliseconds", search_ms}};
  return plan;
}

SpmdSearch run_spmd_search(const spmd::TransformerShape& shape, int ranks, const std::string& comm,
                           double gflops, const ComputeTimer& time_compute) {
  SpmdSearch search;
  search.inputs = read_spmd_costs(comm, gflops * 1e9);
  try {
    search.graph = spmd::transformer_graph(shape, ranks);
    if (time_compute) time_compute(search.graph, search.inputs.costs);
    const auto started = std::chrono::steady_clock::now();
    search.found = spmd::search_strategy(search.graph, search.inputs.costs);
    search.search_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("spmd: ") + e.what());
  }
  return search;
}

nlohmann::json spmd_inputs_json(const std::string& model, const spmd::TransformerShape& s,
                                int ranks, const std::string& comm, double gflops,
                                bool measured_compute, const SpmdCostInputs& inputs) {
  return {{"model", model},
          {"ranks", ranks},
          {"batch", s.batch},
          {"tokens", s.tokens},
          {"width", s.width},
          {"depth", s.depth},
          {"heads", s.heads},
          {"kv_heads", s.kv_heads},
          {"vocabulary", s.vocabulary},
          {"classes", s.classes},
          {"experts", s.experts},
          {"top_k", s.top_k},
          {"comm", comm},
          {"gflops_per_rank", gflops},
          {"compute", measured_compute ? "measured" : "flops"},
          {"comm_measured_ranks", inputs.measured_ranks},
          {"substitutions", inputs.substitutions}};
}

}  // namespace harness
