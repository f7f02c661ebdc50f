#include "harness/cli/profile_estimate_command.h"

#include <memory>
#include <optional>

#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/cli/option_checks.h"
#include "harness/profile/estimated_profile.h"
#include "runtime/models/model_catalog.h"

namespace harness {

namespace {

// What the command line gives; a dimension left out comes from --shape, or its default.
struct EstimateOptions {
  std::string shape, device = "h100", activation_checkpointing = "none", precision = "bf16", out;
  std::optional<int64_t> depth, width, heads, kv_heads, feed_forward, vocab, tokens;
  std::optional<double> peak_flops, memory_bandwidth;
  int64_t batch = 1, tensor = 1, recompute_every = 1;
  bool sequence_parallel = false, vocabulary_parallel = false;
  double matmul_efficiency = 0.7, memory_efficiency = 0.8;
};

runtime::LlamaDimensions dimensions(const EstimateOptions& o) {
  runtime::LlamaDimensions d;
  if (!o.shape.empty()) {
    const runtime::LlamaDimensions* published = find_llama_shape(o.shape);
    if (!published) {
      throw InputError("--shape: unknown shape '" + o.shape +
                       "' (expected one of: " + join(llama_shape_names(), ", ") + ")");
    }
    d = *published;
  } else if (!o.depth || !o.width) {
    throw InputError("profile estimate: give --shape, or --depth and --width");
  }
  d.depth = o.depth.value_or(d.depth);
  d.width = o.width.value_or(d.width);
  d.heads = o.heads.value_or(o.shape.empty() ? d.width / runtime::kLlamaHeadWidth : d.heads);
  d.kv_heads = o.kv_heads.value_or(o.shape.empty() ? d.heads : d.kv_heads);
  d.feed_forward = o.feed_forward.value_or(
      o.shape.empty() ? runtime::llama_feed_forward_width(d.width) : d.feed_forward);
  d.vocab = o.vocab.value_or(o.shape.empty() ? runtime::kLlamaVocabulary : d.vocab);
  d.tokens = o.tokens.value_or(o.shape.empty() ? 4096 : d.tokens);
  return d;
}

EstimateRequest estimate_request(const EstimateOptions& o) {
  EstimateRequest r;
  r.dims = dimensions(o);
  const DeviceRates* device = find_device_rates(o.device);
  if (!device) {
    throw InputError("--device: unknown device '" + o.device +
                     "' (expected one of: " + join(device_rate_names(), ", ") + ")");
  }
  r.device = *device;
  r.device.peak_flops = o.peak_flops.value_or(r.device.peak_flops);
  r.device.memory_bandwidth = o.memory_bandwidth.value_or(r.device.memory_bandwidth);
  // What profile.json names as the device: the preset, or the rates given in its place.
  if (o.peak_flops && o.memory_bandwidth) {
    r.device.name = "given rates";
  } else if (o.peak_flops || o.memory_bandwidth) {
    r.device.name += o.peak_flops ? " (peak given)" : " (bandwidth given)";
  }
  r.element_bytes = o.precision == "fp32" ? 4 : 2;
  r.batch = o.batch;
  r.split = {o.tensor, o.sequence_parallel, o.vocabulary_parallel};
  r.activation_checkpointing = o.activation_checkpointing;
  r.recompute_every = o.recompute_every;
  r.matmul_efficiency = o.matmul_efficiency;
  r.memory_efficiency = o.memory_efficiency;
  return r;
}

void add_dimension_options(CLI::App& command, EstimateOptions& o) {
  command.add_option("--shape", o.shape, "A published shape: llama2-7b, llama2-13b, llama2-70b");
  const auto positive = CLI::Range(int64_t{1}, int64_t{1} << 40);
  command.add_option("--depth", o.depth, "Transformer blocks")->check(positive);
  command.add_option("--width", o.width, "Hidden size")->check(positive);
  command.add_option("--heads", o.heads, "Attention heads (default width / 64)")->check(positive);
  command.add_option("--kv-heads", o.kv_heads, "Key/value heads (default: heads)")->check(positive);
  command.add_option("--feed-forward", o.feed_forward, "SwiGLU width (default: Llama's rule)")
      ->check(positive);
  command.add_option("--vocab", o.vocab, "Vocabulary (default 32000)")->check(positive);
  command.add_option("--tokens", o.tokens, "Sequence length (default 4096)")->check(positive);
  command.add_option("--batch", o.batch, "Samples the profile runs")->check(positive);
  command.add_option("--tensor", o.tensor, "Slice of a tensor axis of this degree")
      ->check(CLI::Range(1, 1 << 20));
  command.add_flag("--sequence-parallel", o.sequence_parallel, "Norms on token shards");
  command.add_flag("--vocabulary-parallel", o.vocabulary_parallel,
                   "Embedding, head and loss split by vocabulary rows");
}

}  // namespace

void add_profile_estimate_command(CLI::App& profile) {
  auto* command = profile.add_subcommand(
      "estimate", "A Llama-style decoder's layer profile computed from its shapes on a device");
  const auto options = std::make_shared<EstimateOptions>();
  EstimateOptions& o = *options;
  add_dimension_options(*command, o);
  command
      ->add_option("--activation-checkpointing", o.activation_checkpointing,
                   "What backward recomputes")
      ->check(CLI::IsMember({"none", "full", "selective"}));
  command->add_option("--recompute-every", o.recompute_every, "Full: the first of each k blocks")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command->add_option("--device", o.device, "h100, h200, a100 or v100 (datasheet rates)")
      ->capture_default_str();
  command->add_option("--peak-flops", o.peak_flops, "Dense 16-bit FLOP/s, in place of the device's")
      ->check(finite_number(0, true));
  command->add_option("--memory-bandwidth", o.memory_bandwidth, "Bytes/s, in place of the device's")
      ->check(finite_number(0, true));
  command
      ->add_option("--matmul-efficiency", o.matmul_efficiency, "Share of peak the products reach")
      ->check(finite_number(0, true))
      ->capture_default_str();
  command->add_option("--memory-efficiency", o.memory_efficiency, "Share of the bandwidth reached")
      ->check(finite_number(0, true))
      ->capture_default_str();
  command->add_option("--precision", o.precision, "Activations: bf16 (2 bytes) or fp32 (4)")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  command->add_option("--out", o.out, "Folder for graph.txt and profile.json");
  command->footer("Example:\n  harness profile estimate --shape llama2-7b --tensor 8 --out DIR");
  command->callback([options] {
    const int code = write_estimated_profile(estimate_request(*options), options->out);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
