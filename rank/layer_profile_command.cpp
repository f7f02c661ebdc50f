#include "rank/layer_profile_command.h"
#include "common/child_process.h"
#include "common/ports.h"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "planner/model/pipedream_graph_writer.h"
#include "rank/model_flags.h"
#include "rank/profile_processes.h"
#include "rank/zoo_queries.h"
#include "runtime/machine/blas_library.h"
#include "runtime/models/model_catalog.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/profile/layer_profile_json.h"
#include "runtime/profile/layer_table.h"
#include "runtime/protocol/heap_policy.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<double> parse_idle_gaps(const std::string& text) {
  std::vector<double> gaps;
  if (text == "none") return gaps;
  const std::string expected =
      "--after-idle-ms '" + text + "': expected up to " + std::to_string(kMaxIdleGaps) +
      " gaps of 0 < ms <= " + std::to_string(int(kMaxIdleGapMs)) + ", e.g. 1,10,100, or none";
  for (const auto& part : split(text, ',')) {
    try {
      size_t used = 0;
      const double gap = std::stod(part, &used);
      if (used != part.size() || !(gap > 0) || gap > kMaxIdleGapMs)
        throw std::invalid_argument(part);
      gaps.push_back(gap);
    } catch (const std::exception&) {
      throw InputError(expected);
    }
  }
  if (gaps.empty() || gaps.size() > kMaxIdleGaps) throw InputError(expected);
  return gaps;
}

namespace {

void check_model_name(const runtime::LayerProfileRequest& request) {
  const auto names = runtime::model_names();
  if (request.torchscript.empty() &&
      std::find(names.begin(), names.end(), request.model) == names.end()) {
    std::string message = "--model: unknown model '" + request.model +
                          "' (expected one of: " + join(names, ", ") + ")";
    if (auto hint = closest_match(request.model, names); !hint.empty()) {
      message += "; did you mean '" + hint + "'?";
    }
    throw InputError(message);
  }
}

// "after idle 10 ms: forward 1.31x, backward 1.24x" per gap, against gap 0.
void print_after_idle(const std::string& what,
                      const std::vector<runtime::AfterIdleTiming>& timings) {
  if (timings.size() < 2) return;
  const auto& base = timings.front();
  std::printf("%s after an idle gap (vs back to back, %.3f / %.3f ms):", what.c_str(),
              base.forward.median_ms, base.backward.median_ms);
  for (size_t g = 1; g < timings.size(); ++g) {
    const auto& t = timings[g];
    std::printf(" %g ms %.2fx/%.2fx", t.gap_ms,
                base.forward.median_ms > 0 ? t.forward.median_ms / base.forward.median_ms : 0.0,
                base.backward.median_ms > 0 ? t.backward.median_ms / base.backward.median_ms : 0.0);
  }
  std::printf("\n");
}

// Prints the profile and writes graph.txt, profile.json and env.json into `out_dir` (when
// given). `stages`: the parts of a stage profile that `result` merges, else empty.
int write_layer_profile(const runtime::LayerProfileResult& result, int warmup,
                        const std::string& out_dir, const std::string& heap, bool cpu_clock,
                        int co_located = 1,
                        const std::vector<runtime::LayerProfileResult>& stages = {}) {
  std::vector<GraphLayer> graph;
  double forward_sum = 0, backward_sum = 0;
  runtime::print_layer_table(result);
  for (const auto& l : result.layers) {
    forward_sum += l.forward.median_ms;
    backward_sum += l.backward.median_ms;
    graph.push_back({l.name, l.kind, l.forward.median_ms, l.backward.median_ms, l.activation_bytes,
                     l.parameter_bytes});
  }
  const double whole = result.whole_forward.median_ms + result.whole_backward.median_ms;
  std::printf("sum of layers: forward %.3f ms + backward %.3f ms = %.3f ms\n", forward_sum,
              backward_sum, forward_sum + backward_sum);
  const bool whole_model = static_cast<int>(result.layers.size()) == result.chain_layers;
  std::printf("%s forward %.3f ms + backward %.3f ms = %.3f ms (layers/whole %.3f)\n",
              !stages.empty() ? "sum of stages:"
              : whole_model   ? "whole model:  "
                              : "whole range:  ",
              result.whole_forward.median_ms, result.whole_backward.median_ms, whole,
              whole > 0 ? (forward_sum + backward_sum) / whole : 0.0);
  json stage_docs = json::array();
  for (const auto& stage : stages) {
    const std::string layers = std::to_string(stage.first_layer) + "-" +
                               std::to_string(stage.first_layer + stage.layers.size() - 1);
    std::printf(
        "stage layers %-8s forward %.3f ms + backward %.3f ms, step %.3f ms (%d untimed "
        "runs while the other stages finished)\n",
        layers.c_str(), stage.whole_forward.median_ms, stage.whole_backward.median_ms,
        stage.whole_step.median_ms, stage.untimed_runs);
    stage_docs.push_back({{"layers", layers},
                          {"forward", timing_stats_json(stage.whole_forward)},
                          {"backward", timing_stats_json(stage.whole_backward)},
                          {"step", timing_stats_json(stage.whole_step)},
                          {"untimed_runs", stage.untimed_runs}});
    if (!stage.after_idle.empty()) {
      stage_docs.back()["after_idle"] = after_idle_json(stage.after_idle);
      print_after_idle("stage layers " + layers, stage.after_idle);
    }
  }
  print_after_idle(whole_model ? "whole model" : "whole range", result.after_idle);
  std::printf("%s step: %.3f ms\n", result.optimizer.c_str(), result.whole_step.median_ms);
  std::printf("medians of %d repetitions after %d warm-up, batch %lld, %d thread(s), %s\n",
              result.repetitions, warmup, static_cast<long long>(result.batch), result.threads,
              cpu_clock ? "process CPU time" : "wall-clock time");
  if (out_dir.empty()) return 0;

  json profile = layer_profile_json(result);
  profile["device"] = "cpu";
  profile["warmup"] = warmup;
  profile["co_located"] = co_located;
  profile["clock"] = cpu_clock ? "cpu" : "wall";
  profile["heap"] = heap;
  profile["layer_sum_ms"] = forward_sum + backward_sum;
  if (!stages.empty()) profile["stages"] = stage_docs;
  // A layer range is not a model the planner or the simulator could use: no graph.txt.
  if (whole_model) {
    write_file_atomic(fs::path(out_dir) / "graph.txt", pipedream_graph(graph, result.input_bytes));
  }
  write_file_atomic(fs::path(out_dir) / "profile.json", json_text(profile, 1) + "\n");
  json env = collect_environment({{"torch_version", runtime::torch_version()}});
  // Layer times are the BLAS's times: say which one (read from this process).
  const runtime::BlasLibrary blas = runtime::loaded_blas_library();
  env["blas"] = {{"library", blas.name}, {"path", blas.path}};
  write_file_atomic(fs::path(out_dir) / "env.json", json_text(env, 2) + "\n");
  std::printf("wrote %s/%sprofile.json, env.json\n", out_dir.c_str(),
              whole_model ? "graph.txt, " : "");
  return 0;
}

}  // namespace

namespace {

// A new folder under the system's temporary directory, for files handed between processes.
fs::path temporary_folder(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a folder in " + fs::temp_directory_path().string());
  }
  return pattern;
}

// Removes a folder (with what is in it) when it goes out of scope, however that happens.
struct FolderRemover {
  fs::path folder;
  ~FolderRemover() { remove(); }
  void remove() const {
    std::error_code ignored;
    if (!folder.empty()) fs::remove_all(folder, ignored);
  }
};

// `--stages A-B,C-D,...`: consecutive layer ranges from layer 0 (the model's end is checked
// against the model).
std::vector<std::pair<int, int>> parse_stage_ranges(const std::string& text) {
  std::vector<std::pair<int, int>> ranges;
  for (const auto& part : split(text, ',')) {
    std::pair<int, int> range;
    try {
      range = runtime::parse_layer_range(part);
    } catch (const std::invalid_argument& e) {
      throw InputError("--stages '" + text + "': " + e.what());
    }
    const int next = ranges.empty() ? 0 : ranges.back().second + 1;
    if (range.first != next) {
      throw InputError("--stages '" + text + "': stage " + std::to_string(ranges.size()) +
                       " starts at layer " + std::to_string(range.first) + ", expected " +
                       std::to_string(next) + " (the stages cover the layers in order from 0)");
    }
    ranges.push_back(range);
  }
  if (ranges.size() < 2) {
    throw InputError("--stages '" + text + "': give at least two ranges, e.g. 0-7,8-13");
  }
  return ranges;
}

}  // namespace

namespace {

struct LayerProfileOptions {
  runtime::LayerProfileRequest request;  // its model's fields read from `model`
  ModelFlags model;
  std::string layers_out;
  int co_located = 1;
  // How the measured process starts the others (internal flags).
  int lockstep_rank = 0;
  runtime::ProfileMeeting meeting;  // where the processes meet (process 0 picks it)
  std::string stages_text, stage_result, range_text;
  std::string after_idle_text = "1,3,10,30,100";  // --after-idle-ms, into request.idle_gaps_ms
  std::string heap = "retain";
  std::string clock = "wall";
};

}  // namespace

// The flags of `profile layers`, bound to `options`.
// What the profiled rank runs beyond the model: its threads, a tensor axis's slice, the run's
// optimizer.
void add_system_options(CLI::App& layers, runtime::LayerProfileRequest& request) {
  layers.add_option("--threads", request.threads, "Intra-op threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  layers
      .add_option("--tensor", request.tensor,
                  "llama/bert: time slice 0 of a tensor axis of this degree, its collectives "
                  "left out (what a tensor-parallel rank computes; the simulator prices them)")
      ->check(CLI::Range(1, 256));
  layers.add_flag("--vocabulary-parallel", request.vocabulary_parallel,
                  "llama, with --tensor: the embedding and the head split by vocabulary rows too "
                  "(a `vocabulary_parallel: true` system's slice)");
  layers
      .add_option("--activation-checkpointing", request.activation_checkpointing,
                  "llama/bert: recompute as a run with model.activation_checkpointing does, each "
                  "recomputed block's backward then holds its recomputation: full (every "
                  "block's forward, or the first of each --recompute-every) or selective (its "
                  "attention core)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "full", "selective"}));
  layers
      .add_option("--recompute-every", request.recompute_every,
                  "With --activation-checkpointing full: the first of each k blocks")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  layers
      .add_option("--optimizer", request.optimizer,
                  "The optimizer whose step is timed (the simulator's step): sgd, no momentum, "
                  "or adamw, as the run's")
      ->check(CLI::IsMember({"sgd", "adamw"}));
  layers.add_flag("--split-backward", request.split_backward,
                  "Also time each layer's backward split as ZB-H1 and ZB-V run it: its input's "
                  "gradient (I) and its weights' (W) apart (profile.json's backward_input and "
                  "backward_weight; the simulator prices I and W from them)");
}

void add_layer_profile_options(CLI::App& layers, LayerProfileOptions& options) {
  auto& request = options.request;
  auto& layers_out = options.layers_out;
  auto& co_located = options.co_located;
  auto& lockstep_rank = options.lockstep_rank;
  auto& stages_text = options.stages_text;
  auto& stage_result = options.stage_result;
  auto& range_text = options.range_text;
  auto& heap = options.heap;
  auto& clock = options.clock;
  add_model_flags(layers, options.model, /*model_required=*/false);
  layers.add_option("--torchscript", request.torchscript,
                    "TorchScript module whose top-level children run in sequence");
  layers.add_option("--batch", request.batch, "Batch size")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  add_system_options(layers, request);
  layers.add_option("--repetitions", request.repetitions, "Timed runs per layer")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  layers.add_option("--warmup", request.warmup, "Untimed runs first")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  layers.add_option("--out", layers_out, "Folder for graph.txt, profile.json, env.json");
  layers
      .add_option("--after-idle-ms", options.after_idle_text,
                  "Idle gaps (ms) after which the whole forward and backward are timed again, "
                  "as a pipeline stage computes after waiting for its input (profile.json's "
                  "after_idle; the simulator prices a rank's compute after a wait from it); "
                  "none: not measured")
      ->capture_default_str();
  layers
      .add_option("--co-located", co_located,
                  "Ranks per host the profile is for: N-1 copies of the same profile run "
                  "beside the measured one in lockstep (every timed forward, backward and "
                  "step starts at a barrier of all N), as N data-parallel ranks share a host; "
                  "with --stages: each stage on N processes, in lockstep with each other, as "
                  "a pipeline whose stages are N-way data-parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  layers.add_option("--stages", stages_text,
                    "Pipeline stages, e.g. 0-7,8-13 (chain layer indexes): one process per "
                    "stage times its layers (round-robin within the range) while the others "
                    "time theirs, as a pipeline's stages share a host; one profile of the "
                    "whole model results");
  layers.add_option("--layers", range_text,
                    "Time only these layers, e.g. 8-13 (chain indexes; the layers before "
                    "run once, untimed, to make their input): one pipeline stage alone; "
                    "writes profile.json only");
  layers
      .add_option("--heap", heap,
                  "retain: freed memory stays in the heap for reuse, as in the harness's "
                  "ranks (run.heap); system: glibc's defaults")
      ->capture_default_str()
      ->check(CLI::IsMember({"retain", "system"}));
  layers
      .add_option("--clock", clock,
                  "wall: monotonic wall-clock time; cpu: the process's CPU time, for a profile "
                  "run with more processes than cores (the simulator's cluster.cpu_cores "
                  "shares the cores itself, so it wants the work without the wait)")
      ->capture_default_str()
      ->check(CLI::IsMember({"wall", "cpu"}));
  // How the measured process starts the others (internal).
  layers.add_option("--lockstep-rank", lockstep_rank)->group("");
  layers.add_option("--lockstep-port", options.meeting.port)->group("");
  layers.add_option("--lockstep-key", options.meeting.key)->group("");
  layers.add_option("--stage-result", stage_result)->group("");
}

// The arguments that start another process of the same profile (a co-located copy or a
// stage's process), before its own --lockstep-* flags.
std::vector<std::string> copy_arguments(const LayerProfileOptions& options) {
  const auto& request = options.request;
  std::vector<std::string> copy_args = {"profile",       "layers",
                                        "--batch",       std::to_string(request.batch),
                                        "--threads",     std::to_string(request.threads),
                                        "--warmup",      std::to_string(request.warmup),
                                        "--repetitions", std::to_string(request.repetitions),
                                        "--co-located",  std::to_string(options.co_located),
                                        "--heap",        options.heap,
                                        "--optimizer",   request.optimizer,
                                        "--clock",       options.clock};
  for (auto& flag : model_flag_arguments(options.model)) copy_args.push_back(std::move(flag));
  for (const auto& [flag, value] :
       {std::pair<std::string, std::string>{"--torchscript", request.torchscript},
        {"--stages", options.stages_text},
        {"--layers", options.range_text},
        {"--after-idle-ms", options.after_idle_text}}) {
    if (!value.empty()) copy_args.insert(copy_args.end(), {flag, value});
  }
  for (const auto& [flag, value] :
       {std::pair<std::string, int64_t>{"--tensor", request.tensor > 1 ? request.tensor : 0},
        {"--recompute-every", request.recompute_every > 1 ? request.recompute_every : 0}}) {
    if (value > 0) copy_args.insert(copy_args.end(), {flag, std::to_string(value)});
  }
  if (request.split_backward) copy_args.push_back("--split-backward");
  if (request.vocabulary_parallel) copy_args.push_back("--vocabulary-parallel");
  if (request.activation_checkpointing != "none") {
    copy_args.insert(copy_args.end(),
                     {"--activation-checkpointing", request.activation_checkpointing});
  }
  return copy_args;
}

// --layers and --stages end within the zoo model's chain (checked before any process starts).
void check_ranges_against_model(const LayerProfileOptions& options,
                                const std::vector<std::pair<int, int>>& stages) {
  const auto& request = options.request;
  const auto& range_text = options.range_text;
  const auto& stages_text = options.stages_text;
  if ((!stages.empty() || !range_text.empty()) && request.torchscript.empty()) {
    const auto names =
        runtime::zoo_layer_names(request.model, request.input_shape, request.num_classes,
                                 request.depth, request.width, request.moe, request.decoder);
    if (request.last_layer >= static_cast<int>(names.size())) {
      throw InputError("--layers '" + range_text + "': " + request.model + "'s layers are 0-" +
                       std::to_string(names.size() - 1));
    }
    if (!stages.empty() && stages.back().second != static_cast<int>(names.size()) - 1) {
      throw InputError("--stages '" + stages_text + "': the stages end at layer " +
                       std::to_string(stages.back().second) + " but " + request.model +
                       "'s layers are 0-" + std::to_string(names.size() - 1));
    }
  }
}

// The processes beside the measured one (process 0): their arguments and how a failure names
// them. Process r runs stage r / co_located as replica r % co_located (without stages, a
// co-located copy); a stage's first replica hands its part over in `part_file(stage)`.
std::pair<std::vector<std::vector<std::string>>, std::vector<std::string>> other_processes(
    const std::vector<std::string>& copy_args, int processes, int co_located,
    const runtime::ProfileMeeting& meeting, bool copies_only,
    const std::function<fs::path(int)>& part_file) {
  std::vector<std::vector<std::string>> others;
  std::vector<std::string> names;
  for (int r = 1; r < processes; ++r) {
    const int stage = r / co_located, replica = r % co_located;
    others.push_back(copy_args);
    others.back().insert(others.back().end(),
                         {"--lockstep-rank", std::to_string(r), "--lockstep-port",
                          std::to_string(meeting.port), "--lockstep-key", meeting.key});
    if (copies_only) {
      names.push_back("co-located copy " + std::to_string(r));
      continue;
    }
    if (replica == 0) {
      others.back().insert(others.back().end(), {"--stage-result", part_file(stage).string()});
    }
    names.push_back("the process of stage " + std::to_string(stage) +
                    (co_located > 1 ? " replica " + std::to_string(replica) : ""));
  }
  return {others, names};
}

// The request's fields that flags give as text (--input-shape, --moe, --after-idle-ms,
// --clock); InputError on a bad one.
void read_request_flags(LayerProfileOptions& options) {
  auto& request = options.request;
  const ModelFlags& model = options.model;
  if (model.model.empty() == request.torchscript.empty()) {
    throw InputError("profile layers: give exactly one of --model and --torchscript");
  }
  request.model = model.model;
  request.input_shape = input_shape_of(model);
  request.num_classes = model.num_classes;
  request.depth = model.depth;
  request.width = model.width;
  try {
    request.moe = moe_shape_of(model);
    request.decoder = decoder_shape_of(model);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  request.idle_gaps_ms = parse_idle_gaps(options.after_idle_text);
  request.cpu_clock = options.clock == "cpu";
}

// Runs the command: the measured process, and the others it starts and watches.
int run_layer_profile_command(LayerProfileOptions& options, const std::string& executable) {
  auto& request = options.request;
  const auto& layers_out = options.layers_out;
  const int co_located = options.co_located;
  const int lockstep_rank = options.lockstep_rank;
  const auto& stages_text = options.stages_text;
  const auto& stage_result = options.stage_result;
  const auto& range_text = options.range_text;
  const auto& heap = options.heap;
  read_request_flags(options);
  runtime::apply_heap_policy(heap);
  if (!range_text.empty()) {
    if (!stages_text.empty()) throw InputError("--layers and --stages: give one of them");
    try {
      std::tie(request.first_layer, request.last_layer) = runtime::parse_layer_range(range_text);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--layers: ") + e.what());
    }
  }
  // A co-located copy: times the same layers in lockstep, writes nothing.
  if (lockstep_rank > 0 && stages_text.empty()) {
    request.before_timed_run =
        runtime::make_lockstep_barrier(options.meeting, lockstep_rank, co_located);
    runtime::profile_layers(request);
    return 0;
  }
  std::vector<std::pair<int, int>> stages;
  if (!stages_text.empty()) stages = parse_stage_ranges(stages_text);
  // Process `process` of a stage profile (stage process / co_located): its stage's layers,
  // and the hooks that keep it in step with the others. Process 0 serves their store.
  const auto join_stage_profile = [&stages, &request, co_located](
                                      const runtime::ProfileMeeting& meeting, int process) {
    const auto sync = runtime::make_stage_profile_sync(
        meeting, process, static_cast<int>(stages.size()), co_located, 600);
    std::tie(request.first_layer, request.last_layer) = stages.at(process / co_located);
    request.after_warmup = sync.start;
    request.keep_running = sync.keep_running;  // until every process has finished
    request.before_timed_run = sync.before_timed_run;
  };
  // Another process of a stage profile: a stage's first replica hands its part over as JSON.
  if (lockstep_rank > 0) {
    join_stage_profile(options.meeting, lockstep_rank);
    const auto part = runtime::profile_layers(request);
    if (!stage_result.empty()) write_file_atomic(stage_result, json_text(layer_profile_json(part)));
    return 0;
  }
  check_model_name(request);
  check_ranges_against_model(options, stages);
  runtime::check_profile_request(request);  // before --out exists: bad input leaves nothing
  if (!layers_out.empty()) create_output_folder(layers_out, "--out");
  const std::vector<std::string> copy_args = copy_arguments(options);
  // Process p runs stage p / co_located (replica p % co_located); without stages, copies.
  const int processes = std::max<int>(1, static_cast<int>(stages.size())) * co_located;
  runtime::ProfileMeeting meeting;
  if (processes > 1) meeting = {pick_free_port(), new_rendezvous_key()};
  // A stage's first replica hands its part over in a file of this folder.
  const fs::path parts = stages.empty() ? fs::path() : temporary_folder("harness-stage-profile");
  const FolderRemover remove_parts{parts};
  const auto remove_parts_now = [&remove_parts] { remove_parts.remove(); };
  const auto part_file = [&parts](int stage) {
    return parts / ("stage" + std::to_string(stage) + ".json");
  };
  const auto [others, names] =
      other_processes(copy_args, processes, co_located, meeting, stages.empty(), part_file);
  int code = 0;
  if (stages.empty()) {
    const ProfileProcesses running(executable, others, names, remove_parts_now);
    if (co_located > 1) {
      request.before_timed_run = runtime::make_lockstep_barrier(meeting, 0, co_located);
    }
    code = write_layer_profile(runtime::profile_layers(request), request.warmup, layers_out, heap,
                               request.cpu_clock, co_located);
  } else {
    std::vector<runtime::LayerProfileResult> parts_measured;
    {
      ProfileProcesses running(executable, others, names, remove_parts_now);
      join_stage_profile(meeting, 0);
      parts_measured.push_back(runtime::profile_layers(request));
      running.wait_all(600);
    }
    for (int stage = 1; stage < static_cast<int>(stages.size()); ++stage) {
      parts_measured.push_back(layer_profile_from_json(parse_json(read_file(part_file(stage)))));
    }
    code = write_layer_profile(merge_stage_profiles(parts_measured), request.warmup, layers_out,
                               heap, request.cpu_clock, co_located, parts_measured);
  }
  return code;
}

void add_layer_profile_command(CLI::App& profile, const std::string& executable) {
  auto* layers = profile.add_subcommand("layers", "Per-layer forward/backward times of a model");
  // The command's options, owned by its callback (no statics: a second app gets its own).
  const auto options = std::make_shared<LayerProfileOptions>();
  add_layer_profile_options(*layers, *options);
  layers->callback([executable, options]() {
    int code = 0;
    try {
      code = run_layer_profile_command(*options, executable);
    } catch (const std::invalid_argument& e) {
      // The profiler's own checks (a layer range, a TorchScript file): bad input.
      throw InputError(std::string("profile layers: ") + e.what());
    }
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
