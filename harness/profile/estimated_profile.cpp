#include "harness/profile/estimated_profile.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "planner/model/pipedream_graph_writer.h"
#include "runtime/models/model_catalog.h"
#include "runtime/profile/layer_profile_json.h"
#include "runtime/profile/layer_table.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Dense BF16/FP16 tensor-core peaks and HBM bandwidths of NVIDIA's datasheets.
const std::vector<DeviceRates>& device_table() {
  static const std::vector<DeviceRates> table = {{"h100", 989.4e12, 3.35e12},
                                                 {"h200", 989.4e12, 4.8e12},
                                                 {"a100", 312e12, 2.039e12},
                                                 {"v100", 125e12, 0.9e12}};
  return table;
}

// Llama 2's published configurations (Touvron et al., 2023), at its 4096-token context.
const std::vector<std::pair<std::string, runtime::LlamaDimensions>>& shape_table() {
  static const std::vector<std::pair<std::string, runtime::LlamaDimensions>> table = {
      {"llama2-7b", {32, 4096, 32, 32, 11008, 32000, 4096}},
      {"llama2-13b", {40, 5120, 40, 40, 13824, 32000, 4096}},
      {"llama2-70b", {80, 8192, 64, 8, 28672, 32000, 4096}}};
  return table;
}

constexpr double kStepBytesPerParameter = 32;  // AdamW: parameter, gradient, 2 moments; zeroing
constexpr double kParameterBytes = 4;          // float32 gradients, as the data axis sums them

runtime::TimingStats flat(double ms) { return {ms, ms, ms}; }

// The layers full activation checkpointing recomputes (runtime::recomputed_layers); none else.
std::vector<bool> fully_recomputed(const EstimateRequest& r, size_t layers) {
  if (r.activation_checkpointing != "full") return std::vector<bool>(layers, false);
  return runtime::recomputed_layers("llama", r.dims.depth, {}, r.recompute_every);
}

// What each chain layer's backward recomputes: full, its whole forward; selective, its attention
// core's products.
std::vector<double> recomputed_ms(const EstimateRequest& r,
                                  const std::vector<runtime::LayerWork>& work,
                                  const std::vector<double>& forward_ms, double matmul_rate) {
  std::vector<double> extra(work.size(), 0.0);
  if (r.activation_checkpointing == "full") {
    const auto chosen = fully_recomputed(r, work.size());
    for (size_t i = 0; i < work.size(); ++i) extra[i] = chosen.at(i) ? forward_ms[i] : 0.0;
  } else if (r.activation_checkpointing == "selective") {
    for (size_t i = 0; i < work.size(); ++i) extra[i] = work[i].attention_flops / matmul_rate * 1e3;
  }
  return extra;
}

// What the profile says of itself: a llama at the request's batch and tokens, its slice, AdamW.
runtime::LayerProfileResult profile_header(const EstimateRequest& r, int layers) {
  runtime::LayerProfileResult result;
  result.model = "llama";
  result.batch = r.batch;
  result.input_shape = {r.dims.tokens};
  result.input_bytes = r.batch * r.dims.tokens * 8;  // int64 token ids
  result.threads = 1;
  result.tensor = static_cast<int>(r.split.tensor);
  result.vocabulary_parallel = r.split.vocabulary_parallel;
  result.optimizer = "adamw";
  result.activation_checkpointing = r.activation_checkpointing;
  result.recompute_every = r.recompute_every;
  result.chain_layers = layers;
  return result;
}

// One layer: backward twice the forward plus `backward_extra_ms` (what it recomputes, the
// embedding's table gradient); a fully recomputed block keeps only its input.
runtime::LayerTiming estimated_timing(const runtime::LayerWork& w, double element_bytes,
                                      double forward_ms, double backward_extra_ms,
                                      bool recomputed) {
  runtime::LayerTiming t;
  t.name = w.name;
  t.kind = w.kind;
  t.forward = flat(forward_ms);
  t.backward = flat(2 * forward_ms + backward_extra_ms);
  t.activation_bytes = static_cast<int64_t>(double(w.output_elements) * element_bytes);
  t.parameter_bytes = static_cast<int64_t>(double(w.parameters) * kParameterBytes);
  t.stored_bytes = static_cast<int64_t>(recomputed ? w.recomputed_bytes : w.stored_bytes);
  t.weight_pending_bytes = static_cast<int64_t>(w.weight_pending_bytes);
  return t;
}

}  // namespace

const DeviceRates* find_device_rates(const std::string& name) {
  for (const auto& d : device_table()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> device_rate_names() {
  std::vector<std::string> names;
  for (const auto& d : device_table()) names.push_back(d.name);
  return names;
}

const runtime::LlamaDimensions* find_llama_shape(const std::string& name) {
  for (const auto& [shape_name, dims] : shape_table()) {
    if (shape_name == name) return &dims;
  }
  return nullptr;
}

std::vector<std::string> llama_shape_names() {
  std::vector<std::string> names;
  for (const auto& entry : shape_table()) names.push_back(entry.first);
  return names;
}

std::string estimate_problem(const EstimateRequest& r) {
  if (std::string problem = runtime::llama_work_problem(r.dims, r.split.tensor); !problem.empty()) {
    return problem;
  }
  if (r.split.vocabulary_parallel && r.dims.vocab % r.split.tensor != 0) {
    return "vocab (" + std::to_string(r.dims.vocab) + ") does not split over a tensor axis of " +
           std::to_string(r.split.tensor);
  }
  if ((r.split.sequence_parallel || r.split.vocabulary_parallel) && r.split.tensor < 2) {
    return "sequence and vocabulary parallelism split over a tensor axis of 2 or more";
  }
  if (r.batch < 1) return "batch must be at least 1";
  if (r.element_bytes != 2 && r.element_bytes != 4) return "activations are 2 or 4 bytes";
  for (const auto& [what, value] : {std::pair{"matmul efficiency", r.matmul_efficiency},
                                    std::pair{"memory efficiency", r.memory_efficiency}}) {
    if (!(value > 0 && value <= 1)) return std::string(what) + " must be in (0, 1]";
  }
  if (!(r.device.peak_flops > 0) || !(r.device.memory_bandwidth > 0)) {
    return "the device's peak FLOP/s and memory bandwidth must be positive";
  }
  if (r.recompute_every < 1) return "recompute_every must be at least 1";
  const std::string& ac = r.activation_checkpointing;
  if (ac != "none" && ac != "full" && ac != "selective") {
    return "activation checkpointing must be none, full or selective";
  }
  return "";
}

runtime::LayerProfileResult estimate_layer_profile(const EstimateRequest& r) {
  if (const std::string problem = estimate_problem(r); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  const auto work = runtime::llama_layer_work(r.dims, r.batch, r.split, r.element_bytes);
  const double matmul_rate = r.device.peak_flops * r.matmul_efficiency;
  const double memory_rate = r.device.memory_bandwidth * r.memory_efficiency;
  std::vector<double> forward_ms;
  for (const auto& w : work) {
    forward_ms.push_back((w.forward_flops / matmul_rate + w.forward_bytes / memory_rate) * 1e3);
  }
  std::vector<double> extra = recomputed_ms(r, work, forward_ms, matmul_rate);
  for (size_t i = 0; i < work.size(); ++i) {
    extra[i] += work[i].backward_extra_bytes / memory_rate * 1e3;
  }
  const std::vector<bool> recomputed = fully_recomputed(r, work.size());
  runtime::LayerProfileResult result = profile_header(r, static_cast<int>(work.size()));
  double forward = 0, backward = 0, parameters = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    result.layers.push_back(
        estimated_timing(work[i], r.element_bytes, forward_ms[i], extra[i], recomputed[i]));
    forward += result.layers.back().forward.median_ms;
    backward += result.layers.back().backward.median_ms;
    parameters += double(work[i].parameters);
  }
  result.whole_forward = flat(forward);
  result.whole_backward = flat(backward);
  result.whole_step = flat(parameters * kStepBytesPerParameter / memory_rate * 1e3);
  return result;
}

namespace {

// The training FLOPs of one sample through the whole model (3 x its forward's products, MFU's
// numerator), whatever slice the profile holds.
double model_flops_per_sample(const runtime::LlamaDimensions& dims) {
  double flops = 0;
  for (const auto& w : runtime::llama_layer_work(dims, 1, {})) flops += 3 * w.forward_flops;
  return flops;
}

json estimate_json(const EstimateRequest& r) {
  return {{"basis",
           "computed from the shapes (harness profile estimate), not measured: a layer's forward "
           "is its matrix products at matmul_efficiency x peak_flops plus its element-wise bytes "
           "at memory_efficiency x memory_bandwidth; backward twice the forward, plus what it "
           "recomputes and the embedding's dense table gradient; AdamW's step 32 bytes a "
           "parameter"},
          {"device", r.device.name},
          {"peak_flops", r.device.peak_flops},
          {"memory_bandwidth", r.device.memory_bandwidth},
          {"matmul_efficiency", r.matmul_efficiency},
          {"memory_efficiency", r.memory_efficiency},
          {"depth", r.dims.depth},
          {"width", r.dims.width},
          {"heads", r.dims.heads},
          {"kv_heads", r.dims.kv_heads},
          {"feed_forward", r.dims.feed_forward},
          {"vocab", r.dims.vocab},
          {"activation_element_bytes", r.element_bytes},
          {"model_flops_per_sample", model_flops_per_sample(r.dims)}};
}

void print_profile(const runtime::LayerProfileResult& result, const EstimateRequest& r) {
  runtime::print_layer_table(result);
  double flops = 0;
  for (const auto& w : runtime::llama_layer_work(r.dims, r.batch, r.split, r.element_bytes)) {
    flops += 3 * w.forward_flops;
  }
  const double seconds = (result.whole_forward.median_ms + result.whole_backward.median_ms) / 1e3;
  std::printf(
      "estimated on %s (%.1f TFLOP/s x %.2f, %.2f TB/s x %.2f): forward %.3f ms + backward "
      "%.3f ms, adamw step %.3f ms; model FLOPs at %.1f%% of peak (the step left out)\n",
      r.device.name.c_str(), r.device.peak_flops / 1e12, r.matmul_efficiency,
      r.device.memory_bandwidth / 1e12, r.memory_efficiency, result.whole_forward.median_ms,
      result.whole_backward.median_ms, result.whole_step.median_ms,
      100 * flops / seconds / r.device.peak_flops);
}

}  // namespace

int write_estimated_profile(const EstimateRequest& request, const std::string& out_dir) {
  if (const std::string problem = estimate_problem(request); !problem.empty()) {
    throw InputError("profile estimate: " + problem);
  }
  if (!out_dir.empty()) create_output_folder(out_dir, "--out");
  const runtime::LayerProfileResult result = estimate_layer_profile(request);
  print_profile(result, request);
  if (out_dir.empty()) return 0;
  std::vector<GraphLayer> graph;
  for (const auto& l : result.layers) {
    graph.push_back({l.name, l.kind, l.forward.median_ms, l.backward.median_ms, l.activation_bytes,
                     l.parameter_bytes});
  }
  json profile = layer_profile_json(result);
  profile["device"] = request.device.name;
  profile["estimate"] = estimate_json(request);
  profile["sequence_parallel"] = request.split.sequence_parallel;
  write_file_atomic(fs::path(out_dir) / "graph.txt", pipedream_graph(graph, result.input_bytes));
  write_file_atomic(fs::path(out_dir) / "profile.json", json_text(profile, 1) + "\n");
  std::printf("wrote %s/graph.txt, profile.json\n", out_dir.c_str());
  return 0;
}

}  // namespace harness
