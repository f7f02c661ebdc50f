#include "harness/external/external_system.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "common/torch_python.h"
#include "harness/external/command_template.h"
#include "harness/external/timing_readers.h"
#include "runtime/protocol/heap_policy.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The point's configuration as template values, keyed by their spec path.
std::map<std::string, std::string> point_values(const PointConfig& c) {
  std::vector<std::string> shape;
  for (long long d : c.model.input_shape) shape.push_back(std::to_string(d));
  return {{"model.name", c.model.name},
          {"model.batch_size", std::to_string(c.model.batch_size)},
          {"model.input_shape", join(shape, ",")},
          {"model.num_classes", std::to_string(c.model.num_classes)},
          {"model.loss", c.model.loss},
          {"model.depth", std::to_string(c.model.depth)},
          {"model.width", std::to_string(c.model.width)},
          {"model.precision", c.model.precision},
          {"model.experts", std::to_string(c.model.moe.experts)},
          {"model.top_k", std::to_string(c.model.moe.top_k)},
          {"model.capacity_factor", format_number(c.model.moe.capacity_factor, 12)},
          {"model.moe_every", std::to_string(c.model.moe.every)},
          {"model.heads", std::to_string(c.model.decoder.heads)},
          {"model.kv_heads", std::to_string(c.model.decoder.kv_heads)},
          {"model.vocab", std::to_string(c.model.decoder.vocab)},
          {"optimizer.name", c.optimizer.name},
          {"optimizer.lr", format_number(c.optimizer.lr, 12)},
          {"optimizer.momentum", format_number(c.optimizer.momentum, 12)},
          {"optimizer.betas",
           format_number(c.optimizer.beta1, 12) + "," + format_number(c.optimizer.beta2, 12)},
          {"optimizer.eps", format_number(c.optimizer.eps, 12)},
          {"optimizer.weight_decay", format_number(c.optimizer.weight_decay, 12)},
          {"run.world_size", std::to_string(c.run.world_size)},
          {"run.threads_per_rank", std::to_string(c.run.threads_per_rank)},
          {"run.iterations", std::to_string(c.run.iterations)},
          {"run.warmup", std::to_string(c.run.warmup)},
          {"run.repeats", std::to_string(c.run.repeats)},
          {"run.seed", std::to_string(c.run.seed)},
          {"run.device", c.run.device},
          {"run.backend", c.run.backend},
          {"run.cpu_idle", to_string(c.run.cpu_idle)},
          {"ddp.bucket_mb", format_number(c.ddp.bucket_mb)},
          {"ddp.first_bucket_mb", format_number(c.ddp.first_bucket_mb)},
          {"ddp.compression", c.ddp.compression},
          {"ddp.powersgd_rank", std::to_string(c.ddp.powersgd_rank)},
          {"pipeline.micro_batches", std::to_string(c.pipeline.micro_batches)}};
}

const std::vector<std::string> kRunPlaceholders = {
    "rank",       "world_size", "local_rank", "master_addr", "master_port", "output_dir",
    "iterations", "warmup",     "seed",       "repeat",      "torch_python"};
// What a `requires:` probe may name: it runs once, before any rank.
const std::vector<std::string> kProbePlaceholders = {"torch_python"};

std::map<std::string, std::string> template_values(const ExternalRunContext& run, long long rank) {
  const PointConfig& c = *run.point;
  // On emulated machines a rank's local rank counts within its machine (ranks fill machine 0
  // first), and the ranks meet at machine 0's address.
  const long long per_machine = run.network ? run.network->ranks_per_machine : c.run.world_size;
  std::map<std::string, std::string> values = {
      {"rank", std::to_string(rank)},
      {"world_size", std::to_string(c.run.world_size)},
      {"local_rank", std::to_string(rank % per_machine)},
      {"master_addr", run.network ? run.network->machines.front().address : "127.0.0.1"},
      {"master_port", std::to_string(run.master_port)},
      {"output_dir", run.raw.empty() ? "" : fs::absolute(run.raw).lexically_normal().string()},
      {"iterations", std::to_string(c.run.iterations)},
      {"warmup", std::to_string(c.run.warmup)},
      {"seed", std::to_string(c.run.seed + run.repeat)},
      {"repeat", std::to_string(run.repeat)},
      {"torch_python", torch_python()}};
  for (auto& [path, value] : point_values(c)) values["point." + path] = value;
  return values;
}

// Checks every placeholder of a template against the names a run will define.
// `known`: the names `text` may use (default: a command's), `expected` how an error lists them.
void check_template(const MapReader& reader, const YAML::Node& node, const std::string& key,
                    const std::string& text,
                    const std::vector<std::string>& known = external_placeholder_names(),
                    const std::string& expected = join(kRunPlaceholders, ", ") +
                                                  ", point.<key path>") {
  std::vector<std::string> names;
  try {
    names = template_placeholders(text);
  } catch (const TemplateError& e) {
    reader.fail(node, key, e.what());
  }
  for (const auto& name : names) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string message =
        "unknown placeholder '{" + name + "}' (expected one of: " + expected + ")";
    if (auto hint = closest_match(name, known); !hint.empty()) {
      message += "; did you mean '{" + hint + "}'?";
    }
    reader.fail(node, key, message);
  }
}

std::vector<std::string> read_string_list(MapReader& reader, const std::string& key,
                                          const std::string& what, bool allow_scalar) {
  YAML::Node node = reader.child(key);
  std::vector<std::string> items;
  if (allow_scalar && node.IsScalar()) return {node.Scalar()};
  if (!node.IsSequence() || node.size() == 0) {
    reader.fail(node, key,
                "expected a non-empty list of strings (" + what + "), got " +
                    (node.IsSequence() ? std::string("an empty list") : describe_node(node)));
  }
  for (const auto& item : node) {
    if (!item.IsScalar()) {
      reader.fail(item, key, "expected a string, got " + describe_node(item));
    }
    items.push_back(item.Scalar());
  }
  return items;
}

ExternalTimings read_timings(MapReader& parent, const SpecOrigin& origin) {
  ExternalTimings timings;
  YAML::Node node = parent.child("timings");
  if (!node) return timings;  // the line protocol on stdout
  MapReader reader(node, parent.key_path("timings"), origin);
  timings.format = reader.get_string("format", "jsonl", {"jsonl", "regex", "chrome_trace"});
  if (timings.format == "chrome_trace") {
    timings.source = "file";
  } else {
    timings.source = reader.get_string("source", "stdout", {"stdout", "file"});
  }
  // Format and source decide which keys belong: none is judged against a stand-in.
  if (!reader.ok()) return timings;
  if (timings.source == "file") {
    if (!reader.has("file")) {
      reader.fail(node, "file",
                  "missing: timings read from a file need 'file' (e.g. {output_dir}/rank{rank}"
                  ".jsonl)");
    }
    timings.file = reader.get_string("file", std::nullopt);
    check_template(reader, reader.child("file"), "file", timings.file);
  }
  if (timings.format == "regex") {
    timings.pattern = reader.get_string("pattern", std::nullopt);
    try {
      compile_named_regex(timings.pattern);
    } catch (const std::invalid_argument& e) {
      reader.fail(reader.child("pattern"), "pattern", e.what());
    }
  }
  if (timings.format == "chrome_trace") {
    timings.step_name = reader.get_string("step_name", kDefaultStepName);
    try {
      TextPattern check(timings.step_name);
    } catch (const PatternError& e) {
      reader.fail(reader.child("step_name"), "step_name",
                  "invalid regular expression: " + std::string(e.what()));
    }
  }
  timings.skip_first = reader.get_int("skip_first", 0, 0, 1'000'000'000);
  reader.finish();
  return timings;
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string shorten(const std::string& text, size_t limit = 200) {
  return text.size() <= limit ? text : text.substr(0, limit) + "...";
}

std::string expected_samples(const ExternalTimings& timings) {
  if (timings.format == "regex") return "lines matching /" + timings.pattern + "/";
  if (timings.format == "chrome_trace") {
    return "complete (\"ph\": \"X\") events named /" + timings.step_name + "/";
  }
  return "one JSON object per measured iteration, e.g. {\"iter\": 0, \"iteration_ms\": 12.5}";
}

TimingRead read_rank_timings(const ExternalTimings& timings, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (timings.format == "chrome_trace") {
    std::stringstream text;
    text << in.rdbuf();
    return read_chrome_trace_timings(text.str(), TextPattern(timings.step_name));
  }
  if (timings.format == "regex")
    return read_regex_timings(in, compile_named_regex(timings.pattern));
  return read_jsonl_timings(in);
}

}  // namespace

const std::vector<std::string>& external_placeholder_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = kRunPlaceholders;
    for (const auto& [path, value] : point_values(PointConfig{})) all.push_back("point." + path);
    return all;
  }();
  return names;
}

ExternalSystem read_external_system(MapReader& reader, const YAML::Node& entry,
                                    const SpecOrigin& origin) {
  ExternalSystem system;
  if (!reader.has("command")) {
    throw InputError(origin.where(entry, reader.path()) + ": missing required key '" +
                     reader.key_path("command") + "' (the program and its arguments)");
  }
  system.command = read_string_list(reader, "command", "the program and its arguments", false);
  {
    YAML::Node items = reader.child("command");
    for (size_t i = 0; i < system.command.size(); ++i) {
      check_template(reader, items[i], "command", system.command[i]);
    }
  }
  if (YAML::Node env = reader.child("env")) {
    if (!env.IsMap()) {
      reader.fail(env, "env", "expected a map of NAME: value, got " + describe_node(env));
    }
    for (const auto& item : env) {
      const std::string name = item.first.Scalar();
      if (!valid_env_name(name)) {
        reader.fail(item.first, "env", "'" + name + "' is not a valid environment variable name");
      }
      if (!item.second.IsScalar()) {
        reader.fail(item.second, "env." + name,
                    "expected a string, got " + describe_node(item.second));
      }
      check_template(reader, item.second, "env." + name, item.second.Scalar());
      system.environment.emplace_back(name, item.second.Scalar());
    }
  }
  system.timings = read_timings(reader, origin);
  if (reader.has("requires")) {
    system.requires_probes = read_string_list(reader, "requires", "shell commands", true);
    YAML::Node items = reader.child("requires");
    for (size_t i = 0; i < system.requires_probes.size(); ++i) {
      check_template(reader, items[i], "requires", system.requires_probes[i], kProbePlaceholders,
                     join(kProbePlaceholders, ", "));
    }
  } else {
    reader.child("requires");  // known, so that a misspelling gets a "did you mean"
  }
  system.optional = reader.get_bool("optional", false);
  return system;
}

std::optional<std::string> failed_requirement(const ExternalSystem& system) {
  for (const auto& probe_template : system.requires_probes) {
    const std::string probe = render_template(probe_template, {{"torch_python", torch_python()}});
    CapturedOutput ran;
    try {
      ran = run_captured("/bin/sh", {"-c", probe});
    } catch (const std::exception& e) {
      return "`" + probe + "` could not be run: " + e.what();
    }
    const int code = ran.exit_code;
    std::string& err = ran.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    const size_t last_newline = err.rfind('\n');
    const std::string last = last_newline == std::string::npos ? err : err.substr(last_newline + 1);
    if (code != 0) {
      return "`" + probe + "` exited with code " + std::to_string(code) +
             (last.empty() ? "" : ": " + shorten(last));
    }
  }
  return std::nullopt;
}

ExternalLaunch plan_external_launch(const ExternalSystem& system, const ExternalRunContext& run) {
  ExternalLaunch launch;
  const PointConfig& c = *run.point;
  for (long long r = 0; r < c.run.world_size; ++r) {
    const auto values = template_values(run, r);
    std::vector<std::string> command;
    for (const auto& item : system.command) command.push_back(render_template(item, values));
    RankProcess rank;
    rank.arguments.assign(command.begin() + 1, command.end());
    rank.stdout_path = run.raw / ("rank" + std::to_string(r) + ".stdout");
    rank.stderr_path = run.raw / ("rank" + std::to_string(r) + ".stderr");
    // torchrun's variables are always set; the spec's env may add to them or override.
    const long long per_machine = run.network ? run.network->ranks_per_machine : c.run.world_size;
    rank.environment = {{"RANK", values.at("rank")},
                        {"LOCAL_RANK", values.at("local_rank")},
                        {"WORLD_SIZE", values.at("world_size")},
                        {"LOCAL_WORLD_SIZE", std::to_string(per_machine)},
                        {"MASTER_ADDR", values.at("master_addr")},
                        {"MASTER_PORT", values.at("master_port")},
                        {"OMP_NUM_THREADS", std::to_string(c.run.threads_per_rank)}};
    // run.heap as glibc's variables, so that an external system's heap behaves as the
    // harness's own ranks' does (a Python process allocates through glibc's malloc too).
    for (const auto& [name, value] : runtime::heap_policy_environment(c.run.heap)) {
      rank.environment[name] = value;
    }
    if (run.network) {
      // The rank in its machine's namespace; Gloo and NCCL bind that machine's interface (the
      // one its traffic to other machines leaves by, shaped), as on a real cluster.
      rank.prefix = {"ip", "netns", "exec", run.network->machine_of(static_cast<int>(r)).netns};
      rank.environment["GLOO_SOCKET_IFNAME"] = kMachineInterface;
      rank.environment["NCCL_SOCKET_IFNAME"] = kMachineInterface;
      rank.environment["GROUP_RANK"] = std::to_string(r / per_machine);
    }
    for (const auto& [name, value] : system.environment) {
      rank.environment[name] = render_template(value, values);
    }
    launch.timing_files.push_back(system.timings.source == "file"
                                      ? fs::path(render_template(system.timings.file, values))
                                      : rank.stdout_path);
    if (r == 0) {
      launch.executable = command.front();
    } else if (command.front() != launch.executable) {
      // launch_local starts one program on every rank.
      launch.error = RankFailure{static_cast<int>(r),
                                 "the program (first item of command) differs between ranks: '" +
                                     launch.executable + "' and '" + command.front() + "'",
                                 ""};
    }
    launch.commands.push_back(std::move(command));
    launch.ranks.push_back(std::move(rank));
  }
  if (launch.error) return launch;
  // Resolve the program as a shell would, so that a missing one is one clear line rather
  // than an exception from the process library.
  if (launch.executable.find('/') == std::string::npos) {
    const fs::path found = find_on_path(launch.executable);
    if (found.empty()) {
      launch.error =
          RankFailure{0, "cannot run '" + launch.executable + "': not found on PATH", ""};
      return launch;
    }
    launch.executable = found.string();
  } else if (::access(launch.executable.c_str(), X_OK) != 0) {
    launch.error =
        RankFailure{0,
                    "cannot run '" + launch.executable +
                        "': " + (fs::exists(launch.executable) ? "not executable" : "no such file"),
                    ""};
  }
  return launch;
}

std::string preview_external_command(const ExternalSystem& system, const PointConfig& point,
                                     long long repeat) {
  auto values = template_values({&point, repeat, "", 0}, 0);
  values["master_port"] = "<port>";
  values["output_dir"] = "<run folder>";
  std::vector<std::string> command;
  for (const auto& item : system.command) command.push_back(render_template(item, values));
  return join(command, " ");
}

json external_run_config(const SystemConfig& system, const ExternalLaunch& launch) {
  const ExternalSystem& external = *system.external;
  json timings = {{"format", external.timings.format},
                  {"source", external.timings.source},
                  {"skip_first", external.timings.skip_first}};
  if (!external.timings.pattern.empty()) timings["pattern"] = external.timings.pattern;
  if (!external.timings.step_name.empty()) timings["step_name"] = external.timings.step_name;
  json files = json::array();
  for (const auto& file : launch.timing_files) files.push_back(file.string());
  json environment = json::array();
  for (const auto& rank : launch.ranks) environment.push_back(rank.environment);
  return {{"system", {{"name", system.name}, {"kind", to_string(system.kind())}}},
          {"executable", launch.executable},
          {"commands", launch.commands},
          {"environment", environment},
          {"timings", timings},
          {"timing_files", files}};
}

std::string external_progress_note(const ExternalSystem& system, const ExternalRunContext& run,
                                   const ExternalLaunch& launch, int rank) {
  if (rank < 0 || rank >= static_cast<int>(launch.timing_files.size())) return "";
  const fs::path& file = launch.timing_files[rank];
  if (system.timings.format == "chrome_trace" || !fs::exists(file)) return "";
  const TimingRead read = read_rank_timings(system.timings, file);
  const long long got = std::max<long long>(
      0, static_cast<long long>(read.samples.size()) - system.timings.skip_first);
  return "after " + std::to_string(got) + " of " + std::to_string(run.point->run.iterations) +
         " samples in " + file.filename().string();
}

std::optional<RankFailure> collect_external_samples(const ExternalSystem& system,
                                                    const ExternalRunContext& run,
                                                    const ExternalLaunch& launch, json& details) {
  const ExternalTimings& timings = system.timings;
  const long long wanted = run.point->run.iterations;
  json per_rank = json::array();
  for (size_t r = 0; r < launch.ranks.size(); ++r) {
    const RankProcess& rank = launch.ranks[r];
    const fs::path& file = launch.timing_files[r];
    auto failure = [&](const std::string& reason) {
      return RankFailure{static_cast<int>(r), reason, tail_lines(rank.stderr_path, 20)};
    };
    if (!fs::exists(file)) {
      return failure("exited 0 without writing its timings file " + file.string() + " (expected " +
                     expected_samples(timings) + ")");
    }
    const TimingRead read = read_rank_timings(timings, file);
    const std::string where = file.filename().string();
    if (read.malformed) {
      std::string reason = "printed a malformed sample at " + where;
      if (read.malformed->line > 0) reason += ":" + std::to_string(read.malformed->line);
      reason += ": " + read.malformed->reason;
      if (!read.malformed->text.empty()) reason += ": '" + read.malformed->text + "'";
      return failure(reason + " (expected " + expected_samples(timings) + ")");
    }
    std::vector<TimingSample> samples = read.samples;
    const long long skipped = std::min<long long>(timings.skip_first, samples.size());
    samples.erase(samples.begin(), samples.begin() + skipped);
    const long long got = static_cast<long long>(samples.size());
    if (got < wanted) {
      std::string reason = got == 0 ? "exited 0 without printing a sample"
                                    : "exited 0 after " + std::to_string(got) + " of " +
                                          std::to_string(wanted) + " samples";
      reason += " in " + where + " (expected " + std::to_string(wanted) + " measured samples";
      if (skipped > 0) reason += " after skip_first " + std::to_string(timings.skip_first);
      reason += ": " + expected_samples(timings) + "); last line: '" +
                (read.last_line.empty() ? std::string("(none)") : shorten(read.last_line)) + "'";
      return failure(reason);
    }
    // More samples than run.iterations: the program ran longer than asked; the first
    // run.iterations measured ones are kept, as the harness's workers would have.
    samples.resize(wanted);
    const SampleTable table = samples_to_csv(samples);
    if (table.error) {
      return failure("printed a malformed sample at " + where + ":" +
                     std::to_string(table.error->line) + ": " + table.error->reason +
                     " (expected " + expected_samples(timings) + ")");
    }
    write_file_atomic(run.raw / ("rank" + std::to_string(r) + ".csv"), table.csv);
    per_rank.push_back({{"rank", r},
                        {"read", static_cast<long long>(read.samples.size())},
                        {"skipped", skipped},
                        {"ignored_after", got - wanted},
                        {"derived_iteration_ms", table.derived_iteration}});
  }
  details = {{"timings_file", launch.timing_files.front().filename().string()},
             {"format", timings.format},
             {"ranks", per_rank}};
  return std::nullopt;
}

}  // namespace harness
