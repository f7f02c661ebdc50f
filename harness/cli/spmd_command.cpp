#include "harness/cli/spmd_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/cli/option_checks.h"
#include "harness/launch/rank_program.h"
#include "harness/study/spmd_measured_compute.h"
#include "harness/study/spmd_search_run.h"
#include "runtime/models/model_catalog.h"

namespace harness {
namespace {

namespace spmd = harness::spmd;

runtime::MoeShape moe_shape(const SpmdRequest& r) {
  runtime::MoeShape moe;
  if (r.experts > 0) moe.experts = r.experts;
  if (r.top_k > 0) moe.top_k = r.top_k;
  if (r.capacity_factor > 0) moe.capacity_factor = r.capacity_factor;
  if (r.moe_every > 0) moe.every = r.moe_every;
  return moe;
}

// The zoo's rules for the model's options, and which flags the model takes.
void check_model(const SpmdRequest& r) {
  if (!runtime::find_model(r.model) || !runtime::has_spmd_graph(r.model)) {
    throw InputError("spmd: --model must be llama, bert, bert_moe, vit or vit_moe, got '" +
                     r.model + "'");
  }
  const bool vision = runtime::is_vision_transformer(r.model);
  if (vision ? r.tokens != 0 : !r.image.empty()) {
    throw InputError(vision ? "spmd: vit and vit_moe take --image, not --tokens"
                            : "spmd: --image is vit's and vit_moe's");
  }
  const bool moe_flags = r.experts || r.top_k || r.moe_every || r.capacity_factor > 0;
  if (moe_flags && !runtime::is_mixture_of_experts(r.model)) {
    throw InputError(
        "spmd: --experts, --top-k, --capacity-factor and --moe-every are bert_moe's and "
        "vit_moe's");
  }
  if (r.classes != 0 && r.model == "llama") {
    throw InputError("spmd: --classes is the encoders' (llama predicts its vocabulary)");
  }
  try {
    const std::vector<int64_t> input =
        vision ? (r.image.empty() ? runtime::find_model(r.model)->default_input_shape : r.image)
               : std::vector<int64_t>{zoo_tokens(r.model, r.tokens)};
    runtime::check_model_options(r.model, input, r.depth, r.width, moe_shape(r),
                                 {r.heads, r.kv_heads, r.vocab});
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("spmd: ") + e.what());
  }
}

// The shape the zoo builds for the request.
spmd::TransformerShape transformer_shape(const SpmdRequest& r) {
  check_model(r);
  SpmdModel model{r.model,      r.batch,   r.tokens,
                  r.width,      r.depth,   {r.heads, r.kv_heads, r.vocab},
                  moe_shape(r), r.classes, r.image};
  return zoo_transformer_shape(model);
}

// The noise study's settings, where any noise option was given.
std::optional<spmd::SpmdNoise> noise_of(const SpmdRequest& r) {
  if (!r.noise_flops && !r.noise_bandwidth && !r.comm_scale) return std::nullopt;
  return spmd::SpmdNoise{
      percent_as_fraction(r.noise_flops.value_or(0.0), "spmd", "--noise-flops"),
      percent_as_fraction(r.noise_bandwidth.value_or(0.0), "spmd", "--noise-bandwidth"),
      r.comm_scale.value_or(1.0)};
}

void check_request(const SpmdRequest& r) {
  if (r.ranks < 1 || r.ranks > kMaxGpus) {
    throw InputError("spmd: --ranks must be 1.." + std::to_string(kMaxGpus));
  }
  if (r.batch < 1) throw InputError("spmd: --batch must be at least 1");
  if (r.measure_compute != (r.gflops == 0)) {
    throw InputError("spmd: give one of --gflops and --measure-compute");
  }
  if (r.measure_compute && r.out_dir.empty()) {
    throw InputError(
        "spmd: --measure-compute writes the plans it times and their times: give --out");
  }
  if (r.loss == "mse" && r.model == "llama") {
    throw InputError("spmd: llama trains by cross_entropy, not --loss mse");
  }
  noise_of(r);  // its refusals before any search
  if (!r.out_dir.empty()) check_output_place(r.out_dir, "--out");
}

void run_noise_study(const SpmdRequest& request, const SpmdSearch& search,
                     const spmd::SpmdNoise& noise, std::ostream& out) {
  const auto outcomes =
      spmd::noise_study(search.graph, search.inputs.costs, noise, request.noise_seeds,
                        static_cast<std::uint64_t>(request.noise_seed));
  out << "\n";
  spmd::write_noise_table(out, noise, outcomes);
  if (!request.out_dir.empty()) {
    write_file_atomic(std::filesystem::path(request.out_dir) / "spmd_noise.json",
                      json_text(spmd::noise_json(noise, outcomes), 1) + "\n");
  }
}

// The model as a spec's `model:` would give it, for the rank program's flags.
ModelConfig model_config(const SpmdRequest& r) {
  ModelConfig model;
  model.name = r.model;
  if (!r.image.empty()) model.input_shape.assign(r.image.begin(), r.image.end());
  if (r.tokens > 0) model.input_shape = {r.tokens};
  model.num_classes = r.classes;
  model.loss = r.loss;
  model.depth = r.depth;
  model.width = r.width;
  if (runtime::is_mixture_of_experts(r.model)) model.moe = moe_shape(r);
  model.decoder = {r.heads, r.kv_heads, r.vocab};
  return model;
}

// Each operator timed by the rank program beside this one, where the request measures compute.
ComputeTimer compute_timer(const SpmdRequest& r, int64_t batch) {
  if (!r.measure_compute) return {};
  OptimizerConfig optimizer;
  optimizer.name = r.optimizer;
  return measured_compute_timer({model_config(r), optimizer, batch, r.threads, r.co_located},
                                RankProgram::beside_this_executable().path(), r.out_dir);
}

}  // namespace

int run_spmd(const SpmdRequest& request, std::ostream& out) {
  const spmd::TransformerShape shape = transformer_shape(request);
  check_request(request);
  const SpmdSearch search = run_spmd_search(shape, request.ranks, request.comm, request.gflops,
                                            compute_timer(request, shape.batch));
  out << "# HiDup SPMD search: " << request.model << ", " << request.ranks << " ranks, batch "
      << shape.batch << " x " << shape.tokens << " tokens, " << search.graph.operators.size()
      << " operators; " << search.found.states << " states in " << format_fixed(search.search_ms, 2)
      << " ms\n";
  if (!search.inputs.substitutions.empty()) out << "# " << search.inputs.substitutions << "\n";
  spmd::write_operator_table(out, search.operator_plans());
  out << "\n";
  spmd::write_strategy_table(out, search.strategy_rows());
  if (!request.out_dir.empty()) {
    const nlohmann::json plan = search.plan_document(
        spmd_inputs_json(request.model, shape, request.ranks, request.comm, request.gflops,
                         request.measure_compute, search.inputs));
    write_file_atomic(std::filesystem::path(request.out_dir) / "spmd_plan.json",
                      json_text(plan, 1) + "\n");
  }
  if (const auto noise = noise_of(request)) run_noise_study(request, search, *noise, out);
  return 0;
}

namespace {

void add_model_options(CLI::App* sub, SpmdRequest& r) {
  sub->add_option("--model", r.model, "llama, bert, bert_moe, vit or vit_moe")->required();
  sub->add_option("--tokens", r.tokens, "Tokens a sequence (default: the model's input)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 26));
  sub->add_option("--width", r.width, "Model width (default: the zoo's)")
      ->check(CLI::Range(int64_t{1}, int64_t{kMaxModelWidth}));
  sub->add_option("--depth", r.depth, "Transformer blocks (default: the zoo's)")
      ->check(CLI::Range(int64_t{1}, int64_t{kMaxModelDepth}));
  sub->add_option("--heads", r.heads, "llama: attention heads (default: width / 64)")
      ->check(CLI::Range(int64_t{1}, int64_t{kMaxModelWidth}));
  sub->add_option("--kv-heads", r.kv_heads, "llama: key/value heads (default: heads)")
      ->check(CLI::Range(int64_t{1}, int64_t{kMaxModelWidth}));
  sub->add_option("--vocab", r.vocab, "llama: vocabulary (default 32000)")
      ->check(CLI::Range(int64_t{2}, int64_t{1'000'000}));
  sub->add_option("--image", r.image, "vit, vit_moe: CHANNELS,HEIGHT,WIDTH (default 3,224,224)")
      ->delimiter(',')
      ->expected(3);
  sub->add_option("--classes", r.classes,
                  "bert, bert_moe, vit, vit_moe: the classifier's classes (default 2; vit 1000)")
      ->check(CLI::Range(int64_t{2}, int64_t{1'000'000}));
  sub->add_option("--experts", r.experts, "bert_moe, vit_moe: experts a mixture (default 4)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  sub->add_option("--top-k", r.top_k, "bert_moe, vit_moe: experts a token (default 2)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  sub->add_option("--capacity-factor", r.capacity_factor,
                  "bert_moe, vit_moe: capacity (default 1.25)")
      ->check(finite_number(0, true));
  sub->add_option("--moe-every", r.moe_every,
                  "bert_moe, vit_moe: a mixture every N blocks (default 2)")
      ->check(CLI::Range(int64_t{1}, int64_t{kMaxModelDepth}));
}

// HiDup's Table IV: the strategy searched on noisy inputs, priced on the true ones.
void add_noise_options(CLI::App* sub, SpmdRequest& r) {
  sub->add_option("--noise-flops", r.noise_flops, "Noise study: +-PCT on each operator's FLOPs")
      ->check(finite_number(0, false));
  sub->add_option("--noise-bandwidth", r.noise_bandwidth,
                  "Noise study: +-PCT on each collective's bandwidth")
      ->check(finite_number(0, false));
  sub->add_option("--comm-scale", r.comm_scale,
                  "Noise study: every collective's time believed x this (0.5, 1.5)")
      ->check(finite_number(0, true));
  sub->add_option("--noise-seeds", r.noise_seeds, "Noise study: seeds")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  sub->add_option("--noise-seed", r.noise_seed, "Noise study: first seed")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 1LL << 62));
}

}  // namespace

void add_spmd_command(CLI::App& app) {
  auto request = std::make_shared<SpmdRequest>();
  auto* sub = app.add_subcommand(
      "spmd", "HiDup's per-operator SPMD search: each operator's split, and what it costs");
  sub->footer(
      "Example:\n"
      "  harness spmd --model llama --ranks 4 --batch 8 --comm "
      "profiles/gloo-2ranks-cpu/comm.json --gflops 80\n"
      "(planner/README.md, HiDup's SPMD search)");
  add_model_options(sub, *request);
  sub->add_option("--ranks", request->ranks, "Ranks the operators split over")
      ->required()
      ->check(CLI::Range(1, kMaxGpus));
  sub->add_option("--batch", request->batch, "Sequences an iteration, over all ranks")
      ->required()
      ->check(CLI::Range(int64_t{1}, kMaxSearchedBatch));
  sub->add_option("--comm", request->comm, "comm.json of `harness profile comm`")->required();
  sub->add_option("--gflops", request->gflops, "One rank's GFLOP/s (`harness machine`'s GEMM)")
      ->check(finite_number(0, true));
  sub->add_flag("--measure-compute", request->measure_compute,
                "Time each operator under each signature here (HiDup's profiled cost model)");
  sub->add_option("--loss", request->loss, "--measure-compute: the ranks' loss")
      ->capture_default_str()
      ->check(CLI::IsMember({"cross_entropy", "mse"}));
  sub->add_option("--optimizer", request->optimizer, "--measure-compute: whose step is timed")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "adamw"}));
  sub->add_option("--threads", request->threads, "--measure-compute: a rank's threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("--co-located", request->co_located,
                  "--measure-compute: ranks sharing this machine, timed as that many processes")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxGpus));
  sub->add_option("--out", request->out_dir, "Write spmd_plan.json into this folder")
      ->check(not_empty());
  add_noise_options(sub, *request);
  sub->callback([request]() {
    int code = 0;
    try {
      code = run_spmd(*request, std::cout);
    } catch (const InputError& e) {
      std::cerr << "error: " << e.what() << '\n';
      code = 2;
    }
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
