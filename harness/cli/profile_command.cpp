#include "harness/cli/profile_command.h"
#include "common/ports.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/statistics.h"
#include "common/text_util.h"
#include "harness/cli/profile_estimate_command.h"
#include "harness/emulation/emulated_network.h"
#include "harness/emulation/link_quantities.h"
#include "harness/emulation/network_plan.h"
#include "harness/launch/local_launcher.h"
#include "harness/profile/comm_measurement.h"
#include "harness/profile/comm_profile.h"
#include "harness/results/results_folder.h"
#include "harness/spec/spec.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/yaml_reader.h"
#include "runtime/models/model_catalog.h"
#include "runtime/protocol/comm_ops.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The independent reference: a plain c10d all-reduce over the same sizes, its iterations
// alternating with the profiler's; its busbw printed beside the profiler's.
json reference_allreduce(const json& raw, const std::vector<CommRow>& rows, int world) {
  json reference = json::array();
  std::printf(
      "\n# all-reduce busbw (GB/s, from p50): profiler vs a plain c10d ProcessGroupGloo, "
      "iterations alternating\n");
  std::printf("#%14s %12s %12s %8s\n", "size(B)", "profiler", "c10d loop", "ratio");
  for (const auto& entry : raw.at("reference")) {
    const double ms = summarize(entry.at("times_ms").get<std::vector<double>>()).p50;
    const int64_t bytes = entry.at("bytes").get<int64_t>();
    const double busbw = ms > 0 ? bytes / (ms * 1e-3) / 1e9 * bus_factor("allreduce", world) : 0;
    reference.push_back({{"bytes", bytes}, {"p50_ms", ms}, {"busbw_gbps", busbw}});
    for (const auto& row : rows) {
      if (row.op != "allreduce" || row.bytes != bytes || busbw <= 0) continue;
      std::printf(" %14lld %12.3f %12.3f %8.3f\n", static_cast<long long>(bytes), row.busbw_gbps,
                  busbw, row.busbw_gbps / busbw);
    }
  }
  return reference;
}

json comm_rows_json(const std::vector<CommRow>& rows) {
  json rows_json = json::array();
  for (const auto& r : rows) {
    json row = {{"op", r.op},
                {"bytes", r.bytes},
                {"samples", r.samples},
                {"p50_ms", r.p50_ms},
                {"p90_ms", r.p90_ms},
                {"mean_ms", r.mean_ms},
                {"algbw_gbps", r.algbw_gbps},
                {"busbw_gbps", r.busbw_gbps},
                {"cpu_cores", r.cpu_cores}};
    if (r.send_call_p50_ms) row["send_call_p50_ms"] = *r.send_call_p50_ms;
    rows_json.push_back(std::move(row));
  }
  return rows_json;
}

// `--machines N` and the link options: the ranks spread over N emulated machines on this host
// (harness/emulation/network_plan.h) instead of one loopback.
struct CommEmulation {
  int machines = 1;
  std::string rate, delay, loss;
};

// The emulated cluster's shape from the options, checked before anything is made; nothing
// for a plain loopback measurement.
std::optional<EmulatedClusterShape> emulated_shape(const CommEmulation& emulation, int world) {
  const bool link_options =
      !emulation.rate.empty() || !emulation.delay.empty() || !emulation.loss.empty();
  if (emulation.machines <= 1) {
    if (link_options) throw InputError("--link-*: need --machines 2 or more (the ranks' machines)");
    return std::nullopt;
  }
  if (world % emulation.machines != 0) {
    throw InputError("--machines " + std::to_string(emulation.machines) +
                     ": does not divide --world " + std::to_string(world));
  }
  EmulatedClusterShape shape;
  shape.machines = emulation.machines;
  shape.ranks_per_machine = world / emulation.machines;
  const auto parse = [](const char* option, const std::string& text, auto parser) {
    try {
      return parser(text);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string(option) + ": " + e.what());
    }
  };
  if (!emulation.rate.empty()) {
    shape.inter_machine.rate_bits_per_s = parse("--link-rate", emulation.rate, parse_link_rate);
  }
  if (!emulation.delay.empty()) {
    shape.inter_machine.delay_s = parse("--link-delay", emulation.delay, parse_link_delay);
  }
  if (!emulation.loss.empty()) {
    shape.inter_machine.loss_percent = parse("--link-loss", emulation.loss, parse_link_loss);
  }
  if (const std::string why = emulation_unavailable_reason(shape); !why.empty()) {
    throw InputError("--machines: " + why);
  }
  return shape;
}

// The fits of every op measured, printed and kept for comm.json.
std::vector<CommFit> fit_and_print(const std::vector<CommRow>& rows,
                                   const std::vector<std::string>& ops, int world, json& fits) {
  std::vector<CommFit> fitted;
  std::cout << "\n# fitted: time = latency + bytes x bus factor / bus bandwidth\n";
  for (const auto& op : ops) {
    if (op == runtime::kHandOverOp) continue;  // a send call's time by size, no line to fit
    const CommFit fit = fit_comm_model(rows, op, world);
    fitted.push_back(fit);
    fits.push_back(to_json(fit));
    std::printf("%-14s latency %10.1f us   bus bandwidth %8.3f GB/s   R^2 %.4f   cpu %.2f cores\n",
                op.c_str(), fit.latency_us, fit.bus_bandwidth / 1e9, fit.r_squared, fit.cpu_cores);
  }
  return fitted;
}

// A topology needs all-reduce and a point-to-point op: send/recv (on emulated machines a
// ping-pong does too).
bool has_topology_ops(const std::vector<std::string>& ops, bool emulated) {
  const auto has = [&](const char* op) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
  };
  return has("allreduce") && (has("sendrecv") || (emulated && has("pingpong")));
}

// A measured bandwidth beside the configured rate: "  940.2 Mbit/s (-6.0%)", or why there is
// none. A bandwidth is a fit's slope, so one message size (or an op not run) gives none; it is
// not a link that delivered nothing.
std::string measured_rate_text(double bytes_per_s, double configured_bits_per_s) {
  if (bytes_per_s <= 0) return "not fitted (needs the op at two sizes or more)";
  char text[64];
  std::snprintf(text, sizeof text, "%10.1f Mbit/s (%+.1f%%)", bytes_per_s * 8 / 1e6,
                100 * (bytes_per_s * 8 / configured_bits_per_s - 1));
  return text;
}

// The link as configured beside what it delivered.
void print_link_comparison(const EmulatedClusterShape& shape, const MeasuredLink& link) {
  const LinkShape& configured = shape.inter_machine;
  std::printf("\n# inter-machine link: configured vs measured\n");
  if (configured.rate_bits_per_s) {
    const double rate = *configured.rate_bits_per_s;
    std::printf("rate        %10.1f Mbit/s   p2p %s   all-reduce busbw %s\n", rate / 1e6,
                measured_rate_text(link.p2p_bytes_per_s, rate).c_str(),
                measured_rate_text(link.allreduce_bus_bytes_per_s, rate).c_str());
  }
  if (link.one_way_latency_us) {
    std::printf("latency     %10.1f us (configured delay)   %10.1f us one way (ping-pong)\n",
                configured.delay_s * 1e6, *link.one_way_latency_us);
  }
  if (link.burst_latency_us) {
    char path[48] = "not resolved";
    if (link.burst_bytes_per_s > 0) {
      std::snprintf(path, sizeof path, "%.2f GB/s", link.burst_bytes_per_s / 1e9);
    }
    std::printf("burst       %10.1f us one way after the link idled   host path %s\n",
                *link.burst_latency_us, path);
  }
}

int run_comm(const CommRequest& plain_request, const CommEmulation& emulation,
             RankProgram& rank_program) {
  CommRequest request = plain_request;
  if (request.world < 1) throw InputError("--world: must be >= 1");
  const std::optional<EmulatedClusterShape> shape = emulated_shape(emulation, request.world);
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
  create_output_folder(out, "--out");
  // The emulated machines live as long as the measurement; a harness killed before removing
  // them has them removed by the next one.
  std::unique_ptr<EmulatedNetwork> network;
  if (shape) {
    remove_stale_namespaces();
    network = std::make_unique<EmulatedNetwork>(plan_network(*shape, static_cast<int>(getpid())));
    request.network = &network->plan();
    std::cout << describe_network_plan(network->plan());
  }
  request.c10d_reference = true;  // the all-reduce's check against plain c10d (printed below)
  const CommMeasurement measured = measure_comm(request, sizes, out, rank_program);
  if (measured.exit_code != 0) return measured.exit_code;
  const auto rows = comm_rows(measured.raw);
  std::cout << render_comm_table(rows, request.world, request.backend);
  json fits = json::array();
  const std::vector<CommFit> fitted = fit_and_print(rows, ops, request.world, fits);
  const json reference = reference_allreduce(measured.raw, rows, request.world);
  // An emulated cluster of several ranks per machine: what its machines' own links give,
  // measured in machine 0 while the network still stands, for the topology's intra value.
  std::vector<CommFit> intra_fits;
  if (shape && shape->ranks_per_machine > 1 && has_topology_ops(ops, true)) {
    const CommMeasurement intra = measure_intra_machine(request, shape->ranks_per_machine, sizes,
                                                        out / "intra", rank_program);
    if (intra.exit_code != 0) return intra.exit_code;
    intra_fits = intra_machine_fits(comm_rows(intra.raw), shape->ranks_per_machine);
  }
  network.reset();
  json emulated = nullptr;
  if (shape) {
    const MeasuredLink measured_figures = measured_link(fitted, rows, intra_fits);
    emulated = emulated_link_json(*shape, measured_figures);
    print_link_comparison(*shape, measured_figures);
  }
  const json comm = {{"emulated_cluster", emulated},    {"world_size", request.world},
                     {"backend", request.backend},      {"iterations", request.iterations},
                     {"warmup", request.warmup},        {"after_compute", request.after_compute},
                     {"rows", comm_rows_json(rows)},    {"fits", fits},
                     {"reference_allreduce", reference}};
  write_file_atomic(out / "comm.json", json_text(comm, 1) + "\n");
  if (has_topology_ops(ops, shape.has_value())) {
    try {
      const std::string name =
          "measured-" + request.backend + "-" + std::to_string(request.world) + "ranks";
      const TopologyFigures figures =
          shape ? emulated_topology(measured_link(fitted, rows), intra_fits, shape->machines,
                                    shape->ranks_per_machine, physical_memory_bytes(),
                                    name + "-" + std::to_string(shape->machines) + "machines")
                : loopback_topology(fitted, request.world, physical_memory_bytes(), name);
      write_file_atomic(out / "topology.yaml", topology_yaml(figures));
    } catch (const InputError& e) {
      // Latency-bound sizes alone can give no positive bandwidth: say so, keep comm.json.
      std::fprintf(stderr, "warning: no topology.yaml: %s (include sizes of a few MiB)\n",
                   e.what());
    }
  }
  write_file_atomic(
      out / "env.json",
      json_text(collect_environment({{"torch_version", rank_program.torch_version()}}), 2) + "\n");
  std::printf("wrote %s/comm.json%s\n", out.c_str(),
              fs::exists(out / "topology.yaml") ? ", topology.yaml" : "");
  return 0;
}

std::string join_ints(const std::vector<long long>& values) {
  std::vector<std::string> parts;
  for (long long v : values) parts.push_back(std::to_string(v));
  return join(parts, ",");
}

// `harness-rank profile layers` arguments from a `what: layers` spec, validated here first.
std::vector<std::string> layer_profile_arguments(MapReader& profile) {
  std::vector<std::string> layers = {
      "profile", "layers", "--model",
      profile.get_string("model", std::nullopt, runtime::model_names())};
  layers.insert(layers.end(),
                {"--batch", std::to_string(profile.get_int("batch", 32, 1, 1 << 20))});
  if (profile.has("input_shape")) {
    layers.insert(layers.end(),
                  {"--input-shape", join_ints(profile.get_int_list("input_shape", {}, 1))});
  }
  const long long num_classes = profile.get_int("num_classes", 0, 0, 1 << 24);
  if (num_classes > 0) layers.insert(layers.end(), {"--num-classes", std::to_string(num_classes)});
  layers.insert(layers.end(),
                {"--repetitions", std::to_string(profile.get_int("repetitions", 10, 1, 100000)),
                 "--warmup", std::to_string(profile.get_int("warmup", 2, 0, 100000)), "--threads",
                 std::to_string(profile.get_int("threads", 1, 1, 1024)), "--heap",
                 profile.get_string("heap", "retain", {"retain", "system"})});
  if (profile.get_bool("split_backward", false)) layers.push_back("--split-backward");
  return layers;
}

}  // namespace

int run_profile_spec(const std::string& path, YAML::Node root,
                     const std::vector<std::string>& overrides, bool dry_run,
                     RankProgram& rank_program) {
  SpecOrigin origin(path);
  // Every error of the spec is reported at once.
  SpecErrors errors(path);
  origin.report_to(&errors);
  const SpecHeader header = read_spec_header(root, origin, overrides, "profile", "profile");
  if (!header.section) {
    errors.add(origin.error(root, "", "missing required key 'profile'"));
    errors.throw_if_any();
  }
  const YAML::Node& section = header.section;
  if (!section.IsMap()) {
    errors.collect([&] { MapReader check(section, "profile", origin); });  // says what it is
    errors.throw_if_any();
  }

  MapReader profile(section, "profile", origin);
  const std::string what = profile.get_string("what", "layers", {"layers", "comm"});
  // `what` decides which keys belong: none of the rest is judged against a stand-in.
  if (!profile.ok()) errors.throw_if_any();
  std::vector<std::string> layers;
  CommRequest comm;
  if (what == "layers") {
    layers = layer_profile_arguments(profile);
  } else {
    comm.world = static_cast<int>(profile.get_int("world", 2, 1, kMaxCommWorld));
    comm.backend = profile.get_string("backend", "gloo", {"gloo"});
    comm.sizes = profile.get_string("sizes", comm.sizes);
    comm.ops = profile.get_string("ops", comm.ops);
    comm.iterations = static_cast<int>(profile.get_int("iterations", 20, 1, 1000000));
    comm.warmup = static_cast<int>(profile.get_int("warmup", 5, 0, 1000000));
    comm.after_compute = static_cast<int>(profile.get_int("after_compute", 0, 0, 100000));
    try {
      parse_size_range(comm.sizes);
    } catch (const InputError& e) {
      profile.report(profile.child("sizes"), "sizes", e.what());
    }
  }
  profile.finish();
  errors.throw_if_any();
  if (dry_run) {
    std::cout << "experiment " << header.name << ": kind profile (" << what
              << "); nothing is launched\n";
    return 0;
  }
  const auto directory = start_results_folder(header.output, header.name, root);
  std::cout << "results: " << directory.string() << "\n";
  if (what == "layers") {
    layers.insert(layers.end(), {"--out", directory.string()});
    return rank_program.run(layers);
  }
  comm.out_dir = directory.string();
  return run_comm(comm, CommEmulation{}, rank_program);
}

void add_profile_command(CLI::App& app, RankProgram& rank_program) {
  auto* profile = app.add_subcommand("profile", "Measure layer and communication profiles");
  profile->require_subcommand(1);
  profile->footer(
      "Examples:\n  harness profile layers --model resnet50 --batch 8 --out DIR\n"
      "  harness profile comm --world 2 --sizes 8:64M:x4 --out DIR");

  // Measured by the rank program, which has the model zoo; its flags and help are its own.
  auto* layers = profile->add_subcommand("layers", "Per-layer forward/backward times of a model")
                     ->prefix_command();
  layers->set_help_flag();
  layers->callback([layers, &rank_program] {
    std::vector<std::string> args = {"profile", "layers"};
    for (const auto& arg : layers->remaining()) args.push_back(arg);
    rank_program.exec(args);
  });

  add_profile_estimate_command(*profile);

  auto* comm =
      profile->add_subcommand("comm", "Collective and send/recv bandwidth (nccl-tests style)");
  const auto comm_request_ptr = std::make_shared<CommRequest>();
  CommRequest& comm_request = *comm_request_ptr;
  comm->add_option("--world", comm_request.world, "Ranks")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxCommWorld));
  comm->add_option("--backend", comm_request.backend, "gloo")->capture_default_str();
  comm->add_option("--sizes", comm_request.sizes, "first:last:xFACTOR, first:last:+STEP or a list")
      ->capture_default_str();
  comm->add_option("--ops", comm_request.ops, "Comma-separated ops")->capture_default_str();
  comm->add_option("--iterations", comm_request.iterations, "Timed iterations per size")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  comm->add_option("--warmup", comm_request.warmup, "Untimed iterations per size")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  comm->add_option("--after-compute", comm_request.after_compute,
                   "Matrix products (64x512 by 512x512) every rank computes before each timed "
                   "operation: the operation as a training step meets it, right after compute")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  comm->add_option("--out", comm_request.out_dir, "Output folder (default: a new results folder)");
  const auto emulation = std::make_shared<CommEmulation>();
  comm->add_option("--machines", emulation->machines,
                   "Emulated machines the ranks spread over (network namespaces; root)")
      ->check(CLI::Range(1, kMaxCommWorld))
      ->capture_default_str();
  comm->add_option("--link-rate", emulation->rate, "Inter-machine rate, e.g. 1gbit (tbf)");
  comm->add_option("--link-delay", emulation->delay, "Inter-machine delay, e.g. 100us (netem)");
  comm->add_option("--link-loss", emulation->loss, "Inter-machine loss, e.g. 0.1% (netem)");
  comm->callback([&rank_program, comm_request_ptr, emulation]() {
    const int code = run_comm(*comm_request_ptr, *emulation, rank_program);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
