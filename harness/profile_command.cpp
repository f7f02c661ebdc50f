#include "harness/profile_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/comm_profile.h"
#include "harness/environment_info.h"
#include "harness/local_launcher.h"
#include "harness/pipedream_graph_writer.h"
#include "harness/result_files.h"
#include "harness/spec.h"
#include "harness/spec_error.h"
#include "harness/statistics.h"
#include "harness/text_util.h"
#include "harness/yaml_reader.h"
#include "runtime/comm_benchmark.h"
#include "runtime/layer_profiler.h"
#include "runtime/worker.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> shape;
  if (text.empty()) return shape;
  for (const auto& part : split(text, ',')) {
    try {
      size_t used = 0;
      const long long d = std::stoll(part, &used);
      if (used != part.size() || d < 1) throw std::invalid_argument(part);
      shape.push_back(d);
    } catch (const std::exception&) {
      throw InputError("--input-shape '" + text + "': expected positive integers, e.g. 3,224,224");
    }
  }
  return shape;
}

json stats_json(const runtime::TimingStats& s) {
  return {{"median_ms", s.median_ms}, {"p10_ms", s.p10_ms}, {"p90_ms", s.p90_ms}};
}

// The other copies of a co-located profile: processes started before the measurement and
// reaped after it (killed if still running: the measured copy is done with them).
class CoLocatedCopies {
 public:
  CoLocatedCopies(const std::string& executable,
                  const std::vector<std::vector<std::string>>& args) {
    for (const auto& copy_args : args) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        std::vector<char*> argv{const_cast<char*>(executable.c_str())};
        for (const auto& a : copy_args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(null_fd, STDOUT_FILENO);
        ::execv(executable.c_str(), argv.data());
        ::_exit(127);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~CoLocatedCopies() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }
  CoLocatedCopies(const CoLocatedCopies&) = delete;
  CoLocatedCopies& operator=(const CoLocatedCopies&) = delete;

 private:
  std::vector<pid_t> pids_;
};

int run_layers(const runtime::LayerProfileRequest& request, const std::string& out_dir,
               int co_located = 1) {
  const auto names = runtime::zoo_model_names();
  if (request.torchscript.empty() &&
      std::find(names.begin(), names.end(), request.model) == names.end()) {
    std::string message = "--model: unknown model '" + request.model +
                          "' (expected one of: " + join(names, ", ") + ")";
    if (auto hint = closest_match(request.model, names); !hint.empty()) {
      message += "; did you mean '" + hint + "'?";
    }
    throw InputError(message);
  }
  const runtime::LayerProfileResult result = runtime::profile_layers(request);

  std::vector<GraphLayer> graph;
  json layers = json::array();
  double forward_sum = 0, backward_sum = 0;
  std::printf("%-22s %-18s %12s %12s %14s %14s\n", "layer", "kind", "forward ms", "backward ms",
              "activation B", "parameter B");
  for (const auto& l : result.layers) {
    std::printf("%-22s %-18s %12.3f %12.3f %14lld %14lld\n", l.name.c_str(), l.kind.c_str(),
                l.forward.median_ms, l.backward.median_ms,
                static_cast<long long>(l.activation_bytes),
                static_cast<long long>(l.parameter_bytes));
    forward_sum += l.forward.median_ms;
    backward_sum += l.backward.median_ms;
    graph.push_back({l.name, l.kind, l.forward.median_ms, l.backward.median_ms, l.activation_bytes,
                     l.parameter_bytes});
    layers.push_back({{"name", l.name},
                      {"kind", l.kind},
                      {"forward", stats_json(l.forward)},
                      {"backward", stats_json(l.backward)},
                      {"activation_bytes", l.activation_bytes},
                      {"parameter_bytes", l.parameter_bytes}});
  }
  const double whole = result.whole_forward.median_ms + result.whole_backward.median_ms;
  std::printf("sum of layers: forward %.3f ms + backward %.3f ms = %.3f ms\n", forward_sum,
              backward_sum, forward_sum + backward_sum);
  std::printf("whole model:   forward %.3f ms + backward %.3f ms = %.3f ms (layers/whole %.3f)\n",
              result.whole_forward.median_ms, result.whole_backward.median_ms, whole,
              whole > 0 ? (forward_sum + backward_sum) / whole : 0.0);
  std::printf("optimizer step (SGD): %.3f ms\n", result.whole_step.median_ms);
  std::printf("medians of %d repetitions after %d warm-up, batch %lld, %d thread(s)\n",
              result.repetitions, request.warmup, static_cast<long long>(result.batch),
              result.threads);
  if (out_dir.empty()) return 0;

  const json profile = {{"model", result.model},
                        {"batch", result.batch},
                        {"input_shape", result.input_shape},
                        {"input_bytes", result.input_bytes},
                        {"device", "cpu"},
                        {"repetitions", result.repetitions},
                        {"warmup", request.warmup},
                        {"threads", result.threads},
                        {"co_located", co_located},
                        {"layers", layers},
                        {"layer_sum_ms", forward_sum + backward_sum},
                        {"whole_model",
                         {{"forward", stats_json(result.whole_forward)},
                          {"backward", stats_json(result.whole_backward)},
                          {"step", stats_json(result.whole_step)}}}};
  write_file_atomic(fs::path(out_dir) / "graph.txt", pipedream_graph(graph, result.input_bytes));
  write_file_atomic(fs::path(out_dir) / "profile.json", profile.dump(1) + "\n");
  json env = collect_environment({{"torch_version", runtime::torch_version()}});
  write_file_atomic(fs::path(out_dir) / "env.json", env.dump(2) + "\n");
  std::printf("wrote %s/graph.txt, profile.json, env.json\n", out_dir.c_str());
  return 0;
}

struct CommRequest {
  int world = 2;
  std::string backend = "gloo";
  std::string sizes = "8:64M:x4";
  std::string ops = "allreduce,allgather,reducescatter,broadcast,sendrecv,copy";
  int iterations = 20;
  int warmup = 5;
  double stall_timeout_s = 300;
  std::string out_dir;
};

double physical_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

int run_comm(const CommRequest& request, const std::string& executable) {
  if (request.world < 1) throw InputError("--world: must be >= 1");
  if (request.backend != "gloo") {
    throw InputError("--backend '" + request.backend + "': this build supports gloo");
  }
  const std::vector<int64_t> sizes = parse_size_range(request.sizes);
  const std::vector<std::string> known(std::begin(runtime::kCommOps), std::end(runtime::kCommOps));
  const auto ops = split(request.ops, ',');
  for (const auto& op : ops) {
    if (std::find(known.begin(), known.end(), op) == known.end()) {
      throw InputError("--ops: unknown op '" + op + "' (expected: " + join(known, ", ") + ")");
    }
  }
  const fs::path out = request.out_dir.empty()
                           ? fs::path(create_run_directory("results", "comm_profile"))
                           : fs::path(request.out_dir);
  fs::create_directories(out);
  std::vector<std::string> size_text;
  for (int64_t s : sizes) size_text.push_back(std::to_string(s));
  const int port = pick_free_port();
  std::vector<RankProcess> ranks;
  for (int r = 0; r < request.world; ++r) {
    RankProcess rank;
    rank.arguments = {"comm-worker",
                      "--rank",
                      std::to_string(r),
                      "--world-size",
                      std::to_string(request.world),
                      "--master-addr",
                      "127.0.0.1",
                      "--master-port",
                      std::to_string(port),
                      "--ops",
                      request.ops,
                      "--sizes",
                      join(size_text, ","),
                      "--iterations",
                      std::to_string(request.iterations),
                      "--warmup",
                      std::to_string(request.warmup),
                      "--out",
                      (out / "comm-raw.json").string()};
    rank.stdout_path = out / ("rank" + std::to_string(r) + ".stdout");
    rank.stderr_path = out / ("rank" + std::to_string(r) + ".stderr");
    rank.environment = {{"OMP_NUM_THREADS", "1"}};
    ranks.push_back(rank);
  }
  LaunchLimits limits;
  limits.stall_timeout_s = request.stall_timeout_s;
  install_stop_signal_handlers();
  const LaunchOutcome outcome = launch_local(executable, ranks, limits);
  if (!outcome.ok) {
    const int rank = outcome.failure ? outcome.failure->rank : -1;
    std::fprintf(stderr, "error: comm profile failed: rank %d %s\n%s", rank,
                 outcome.failure ? outcome.failure->reason.c_str() : "interrupted",
                 outcome.failure ? outcome.failure->stderr_tail.c_str() : "");
    return outcome.interrupted ? 130 : 1;
  }
  const json raw = json::parse(read_file(out / "comm-raw.json"));
  const auto rows = comm_rows(raw);
  std::cout << render_comm_table(rows, request.world, request.backend);

  json fits = json::array();
  std::vector<CommFit> fitted;
  std::cout << "\n# fitted: time = latency + bytes x bus factor / bus bandwidth\n";
  for (const auto& op : ops) {
    const CommFit fit = fit_comm_model(rows, op, request.world);
    fitted.push_back(fit);
    fits.push_back({{"op", op},
                    {"latency_us", fit.latency_us},
                    {"bus_bandwidth_bytes_per_s", fit.bus_bandwidth},
                    {"r_squared", fit.r_squared},
                    {"cpu_cores_per_rank", fit.cpu_cores}});
    std::printf("%-14s latency %10.1f us   bus bandwidth %8.3f GB/s   R^2 %.4f   cpu %.2f cores\n",
                op.c_str(), fit.latency_us, fit.bus_bandwidth / 1e9, fit.r_squared, fit.cpu_cores);
  }
  // The independent reference: a plain c10d all-reduce over the same sizes, its iterations
  // alternating with the profiler's. Its busbw beside the profiler's.
  json reference = json::array();
  std::printf(
      "\n# all-reduce busbw (GB/s, from p50): profiler vs a plain c10d ProcessGroupGloo, "
      "iterations alternating\n");
  std::printf("#%14s %12s %12s %8s\n", "size(B)", "profiler", "c10d loop", "ratio");
  for (const auto& entry : raw.at("reference")) {
    const double ms = summarize(entry.at("times_ms").get<std::vector<double>>()).p50;
    const int64_t bytes = entry.at("bytes").get<int64_t>();
    const double busbw =
        ms > 0 ? bytes / (ms * 1e-3) / 1e9 * bus_factor("allreduce", request.world) : 0;
    reference.push_back({{"bytes", bytes}, {"p50_ms", ms}, {"busbw_gbps", busbw}});
    for (const auto& row : rows) {
      if (row.op != "allreduce" || row.bytes != bytes || busbw <= 0) continue;
      std::printf(" %14lld %12.3f %12.3f %8.3f\n", static_cast<long long>(bytes), row.busbw_gbps,
                  busbw, row.busbw_gbps / busbw);
    }
  }
  json rows_json = json::array();
  for (const auto& r : rows) {
    rows_json.push_back({{"op", r.op},
                         {"bytes", r.bytes},
                         {"samples", r.samples},
                         {"p50_ms", r.p50_ms},
                         {"p90_ms", r.p90_ms},
                         {"algbw_gbps", r.algbw_gbps},
                         {"busbw_gbps", r.busbw_gbps},
                         {"cpu_cores", r.cpu_cores}});
  }
  const json comm = {{"world_size", request.world},
                     {"backend", request.backend},
                     {"iterations", request.iterations},
                     {"warmup", request.warmup},
                     {"rows", rows_json},
                     {"fits", fits},
                     {"reference_allreduce", reference}};
  write_file_atomic(out / "comm.json", comm.dump(1) + "\n");
  if (std::find(ops.begin(), ops.end(), "sendrecv") != ops.end() &&
      std::find(ops.begin(), ops.end(), "allreduce") != ops.end()) {
    try {
      write_file_atomic(out / "topology.yaml",
                        topology_yaml(fitted, request.world, physical_memory_bytes(),
                                      "measured-" + request.backend + "-" +
                                          std::to_string(request.world) + "ranks"));
    } catch (const InputError& e) {
      // Latency-bound sizes alone can give no positive bandwidth: say so, keep comm.json.
      std::fprintf(stderr, "warning: no topology.yaml: %s (include sizes of a few MiB)\n",
                   e.what());
    }
  }
  write_file_atomic(
      out / "env.json",
      collect_environment({{"torch_version", runtime::torch_version()}}).dump(2) + "\n");
  std::printf("wrote %s/comm.json%s\n", out.c_str(),
              fs::exists(out / "topology.yaml") ? ", topology.yaml" : "");
  return 0;
}

std::string join_ints(const std::vector<long long>& values) {
  std::vector<std::string> parts;
  for (long long v : values) parts.push_back(std::to_string(v));
  return join(parts, ",");
}

}  // namespace

int run_profile_spec(const std::string& path, YAML::Node root,
                     const std::vector<std::string>& overrides, bool dry_run,
                     const std::string& executable) {
  SpecOrigin origin(path);
  const SpecHeader header = read_spec_header(root, origin, overrides, "profile", "profile");
  if (!header.section) {
    throw InputError(origin.where(root, "") + ": missing required key 'profile'");
  }
  const YAML::Node& section = header.section;

  MapReader profile(section, "profile", origin);
  const std::string what = profile.get_string("what", "layers", {"layers", "comm"});
  runtime::LayerProfileRequest layers;
  CommRequest comm;
  if (what == "layers") {
    layers.model = profile.get_string("model", std::nullopt, runtime::zoo_model_names());
    layers.batch = profile.get_int("batch", 32, 1, 1 << 20);
    if (profile.has("input_shape")) {
      layers.input_shape = parse_shape(join_ints(profile.get_int_list("input_shape", {}, 1)));
    }
    layers.num_classes = profile.get_int("num_classes", 0, 0, 1 << 24);
    layers.repetitions = static_cast<int>(profile.get_int("repetitions", 10, 1, 100000));
    layers.warmup = static_cast<int>(profile.get_int("warmup", 2, 0, 100000));
    layers.threads = static_cast<int>(profile.get_int("threads", 1, 1, 1024));
  } else {
    comm.world = static_cast<int>(profile.get_int("world", 2, 1, 4096));
    comm.backend = profile.get_string("backend", "gloo", {"gloo"});
    comm.sizes = profile.get_string("sizes", comm.sizes);
    comm.ops = profile.get_string("ops", comm.ops);
    comm.iterations = static_cast<int>(profile.get_int("iterations", 20, 1, 1000000));
    comm.warmup = static_cast<int>(profile.get_int("warmup", 5, 0, 1000000));
    try {
      parse_size_range(comm.sizes);
    } catch (const InputError& e) {
      profile.fail(profile.child("sizes"), "sizes", e.what());
    }
  }
  profile.finish();
  if (dry_run) {
    std::cout << "experiment " << header.name << ": kind profile (" << what
              << "); nothing is launched\n";
    return 0;
  }
  const auto directory = start_results_folder(header.output, header.name, root);
  std::cout << "results: " << directory.string() << "\n";
  if (what == "layers") return run_layers(layers, directory.string());
  comm.out_dir = directory.string();
  return run_comm(comm, executable);
}

void add_profile_command(CLI::App& app, const std::string& executable) {
  auto* profile = app.add_subcommand("profile", "Measure layer and communication profiles");
  profile->require_subcommand(1);

  auto* layers = profile->add_subcommand("layers", "Per-layer forward/backward times of a model");
  static runtime::LayerProfileRequest request;
  static std::string shape_text, layers_out;
  static int co_located = 1;
  static int lockstep_rank = 0, lockstep_port = 0;
  layers->add_option("--model", request.model, "Zoo model (harness models)");
  layers->add_option("--torchscript", request.torchscript,
                     "TorchScript module whose top-level children run in sequence");
  layers->add_option("--batch", request.batch, "Batch size")->capture_default_str();
  layers->add_option("--input-shape", shape_text, "One sample's shape, e.g. 3,224,224");
  layers->add_option("--num-classes", request.num_classes, "Output width (0: model default)");
  layers->add_option("--depth", request.depth, "bert/mlp layers (0: model default)");
  layers->add_option("--width", request.width, "bert/vgg19/mlp width (0: model default)");
  layers->add_option("--repetitions", request.repetitions, "Timed runs per layer")
      ->capture_default_str();
  layers->add_option("--warmup", request.warmup, "Untimed runs first")->capture_default_str();
  layers->add_option("--threads", request.threads, "Intra-op threads")->capture_default_str();
  layers->add_option("--out", layers_out, "Folder for graph.txt, profile.json, env.json");
  layers
      ->add_option("--co-located", co_located,
                   "Ranks per host the profile is for: N-1 copies of the same profile run "
                   "beside the measured one in lockstep (every timed forward, backward and "
                   "step starts at a barrier of all N), as N data-parallel ranks share a host")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  // How the measured copy starts the others (internal).
  layers->add_option("--lockstep-rank", lockstep_rank)->group("");
  layers->add_option("--lockstep-port", lockstep_port)->group("");
  layers->callback([executable]() {
    if (request.model.empty() == request.torchscript.empty()) {
      throw InputError("profile layers: give exactly one of --model and --torchscript");
    }
    request.input_shape = parse_shape(shape_text);
    if (lockstep_rank > 0) {  // a co-located copy: time in lockstep, write nothing
      request.before_timed_run =
          runtime::make_lockstep_barrier(lockstep_port, lockstep_rank, co_located);
      runtime::profile_layers(request);
      return;
    }
    std::vector<std::string> copy_args = {"profile",       "layers",
                                          "--batch",       std::to_string(request.batch),
                                          "--threads",     std::to_string(request.threads),
                                          "--warmup",      std::to_string(request.warmup),
                                          "--repetitions", std::to_string(request.repetitions),
                                          "--co-located",  std::to_string(co_located)};
    for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--model", request.model},
                                      {"--torchscript", request.torchscript},
                                      {"--input-shape", shape_text}}) {
      if (!value.empty()) copy_args.insert(copy_args.end(), {flag, value});
    }
    for (const auto& [flag, value] :
         {std::pair<std::string, int64_t>{"--num-classes", request.num_classes},
          {"--depth", request.depth},
          {"--width", request.width}}) {
      if (value > 0) copy_args.insert(copy_args.end(), {flag, std::to_string(value)});
    }
    const int port = co_located > 1 ? pick_free_port() : 0;
    std::vector<std::vector<std::string>> copies;
    for (int r = 1; r < co_located; ++r) {
      copies.push_back(copy_args);
      copies.back().insert(copies.back().end(), {"--lockstep-rank", std::to_string(r),
                                                 "--lockstep-port", std::to_string(port)});
    }
    const CoLocatedCopies running(executable, copies);
    if (co_located > 1) {
      request.before_timed_run = runtime::make_lockstep_barrier(port, 0, co_located);
    }
    const int code = run_layers(request, layers_out, co_located);
    if (code != 0) throw CLI::RuntimeError(code);
  });

  auto* comm =
      profile->add_subcommand("comm", "Collective and send/recv bandwidth (nccl-tests style)");
  static CommRequest comm_request;
  comm->add_option("--world", comm_request.world, "Ranks")->capture_default_str();
  comm->add_option("--backend", comm_request.backend, "gloo")->capture_default_str();
  comm->add_option("--sizes", comm_request.sizes, "first:last:xFACTOR, first:last:+STEP or a list")
      ->capture_default_str();
  comm->add_option("--ops", comm_request.ops, "Comma-separated ops")->capture_default_str();
  comm->add_option("--iterations", comm_request.iterations, "Timed iterations per size")
      ->capture_default_str();
  comm->add_option("--warmup", comm_request.warmup, "Untimed iterations per size")
      ->capture_default_str();
  comm->add_option("--out", comm_request.out_dir, "Output folder (default: a new results folder)");
  comm->callback([executable]() {
    const int code = run_comm(comm_request, executable);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
