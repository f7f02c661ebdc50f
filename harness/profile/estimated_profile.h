// `harness profile estimate`: a Llama-style decoder's layer profile computed, not measured, for
// a device the harness does not run on: each layer's forward is its matrix products' FLOPs at a
// share of the device's peak plus its element-wise bytes at a share of its memory bandwidth
// (runtime/models/llama_work.h counts both); backward is twice the forward (and the embedding's
// dense table gradient); AdamW's step moves 32 bytes a parameter. The same graph.txt and
// profile.json as `harness profile layers` writes, so `harness simulate` prices paper-scale shapes
// (Llama-2 7B, 70B) on paper-scale clusters. profile.json's `estimate` says every assumption the
// times rest on, and `sequence_parallel` whether the slice's norms ran on token shards (a
// simulation refuses a system that differs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/llama_work.h"
#include "runtime/profile/layer_profiler.h"

namespace harness {

// A device's dense 16-bit matrix peak and memory bandwidth, from its vendor's datasheet.
struct DeviceRates {
  std::string name;
  double peak_flops = 0;        // FLOP/s
  double memory_bandwidth = 0;  // bytes/s
};

// h100 (SXM5), h200 (SXM), a100 (SXM4 80 GB), v100 (SXM2); nullptr for another name.
const DeviceRates* find_device_rates(const std::string& name);
std::vector<std::string> device_rate_names();

// A published shape by name (llama2-7b, llama2-13b, llama2-70b: layers, width, heads, key/value
// heads, feed-forward width, vocabulary and 4096 tokens); nullptr for another name.
const runtime::LlamaDimensions* find_llama_shape(const std::string& name);
std::vector<std::string> llama_shape_names();

struct EstimateRequest {
  runtime::LlamaDimensions dims;
  int64_t batch = 1;
  runtime::LlamaSplit split;                      // the slice's tensor axis
  std::string activation_checkpointing = "none";  // none | full | selective
  int64_t recompute_every = 1;
  DeviceRates device;
  double matmul_efficiency = 0.7;  // the share of peak_flops the products reach
  double memory_efficiency = 0.8;  // the share of memory_bandwidth element-wise work reaches
  double element_bytes = 2;        // an activation's: 2 (bf16, fp16) or 4 (fp32)
};

// What the request cannot be ("" where nothing): the decoder's split (llama_work_problem), a
// batch below 1, efficiencies outside (0, 1], recompute_every below 1, an unknown checkpointing.
std::string estimate_problem(const EstimateRequest& request);

// The profile (times in milliseconds, spread-free: p10 = median = p90). Throws
// std::invalid_argument with estimate_problem's reason.
runtime::LayerProfileResult estimate_layer_profile(const EstimateRequest& request);

// Prints the profile's layers and writes graph.txt and profile.json into `out_dir` (when not
// empty; made first, InputError where it cannot be). Returns the exit code.
int write_estimated_profile(const EstimateRequest& request, const std::string& out_dir);

}  // namespace harness
