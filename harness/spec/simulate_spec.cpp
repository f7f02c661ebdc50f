#include "harness/spec/simulate_spec.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "harness/spec/mesh_form.h"
#include "harness/spec/published_profiles.h"
#include "harness/spec/spec.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/sweep.h"
#include "harness/spec/system_keys.h"
#include "harness/spec/yaml_reader.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"
#include "runtime/profile/layer_profile_json.h"

namespace harness {
namespace {

constexpr double kZeroOrMore = MapReader::kZeroOrMore;

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSection = "simulate";

std::optional<double> optional_positive(MapReader& r, const std::string& key) {
  if (!r.has(key)) return std::nullopt;
  return r.get_double(key, std::nullopt, 0.0);
}

// cluster.inter_send_call_us or intra_send_call_us: [[bytes, microseconds], ...], sizes
// ascending, nothing negative (the link probe's `send_call_us`, as env.json writes it).
std::vector<std::pair<double, double>> read_send_calls(MapReader& cluster, const std::string& key) {
  std::vector<std::pair<double, double>> calls;
  const YAML::Node node = cluster.child(key);
  if (!node || node.IsNull()) return calls;
  const char* shape = "must be a list of [bytes, microseconds] pairs, bytes ascending";
  if (!node.IsSequence()) cluster.fail(node, key, shape);
  for (const YAML::Node& pair : node) {
    double bytes = -1, us = -1;
    try {
      if (pair.IsSequence() && pair.size() == 2)
        bytes = pair[0].as<double>(), us = pair[1].as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(bytes >= 0) || !(us >= 0) || !std::isfinite(bytes) || !std::isfinite(us) ||
        (!calls.empty() && !(bytes > calls.back().first))) {
      cluster.fail(pair, key, shape);
    }
    calls.emplace_back(bytes, us);
  }
  return calls;
}

// What profile.json (beside the graph file) says that the spec may still decide on or that
// only warns: the optimizer step it measured (whole_model.step; 0 where there is none:
// published profiles have no step), its after-idle timings, how many processes ran at once while
// it was timed (stages x co-located copies) and on which clock. The rest of what it says goes
// straight into the model's settings (read_profile_json).
struct ProfileReading {
  std::string path;  // of profile.json; empty where there is none
  double step_ms = 0.0;
  int processes = 1;
  bool cpu_clock = false;
  std::vector<AfterIdleSettings> after_idle;
};

// [{gap_ms, forward: {median_ms}, backward: {median_ms}}, ...] over layers first..last.
AfterIdleSettings after_idle_settings(const json& timings, int first, int last) {
  AfterIdleSettings settings;
  settings.first_layer = first;
  settings.last_layer = last;
  for (const json& t : timings) {
    settings.gap_ms.push_back(t.at("gap_ms").get<double>());
    settings.forward_ms.push_back(t.at("forward").at("median_ms").get<double>());
    settings.backward_ms.push_back(t.at("backward").at("median_ms").get<double>());
  }
  return settings;
}

// profile.json's after_idle: the whole model's (its layers 0..n-1), or each stage's of a stage
// profile ("layers": "A-B").
std::vector<AfterIdleSettings> read_after_idle(const json& doc) {
  std::vector<AfterIdleSettings> ranges;
  if (doc.contains("after_idle")) {
    const int layers = static_cast<int>(doc.at("layers").size());
    ranges.push_back(after_idle_settings(doc.at("after_idle"), 0, layers - 1));
  }
  if (doc.contains("stages")) {
    for (const json& stage : doc.at("stages")) {
      if (!stage.contains("after_idle")) continue;
      const auto [first, last] = runtime::parse_layer_range(stage.at("layers").get<std::string>());
      ranges.push_back(after_idle_settings(stage.at("after_idle"), first, last));
    }
  }
  return ranges;
}

// profile.json's split backward: every layer's I and W medians, or none where a layer lacks them.
void read_backward_split(const json& doc, ModelSettings& m) {
  if (!doc.contains("layers")) return;
  for (const json& layer : doc.at("layers")) {
    if (!layer.contains("backward_input") || !layer.contains("backward_weight")) {
      m.backward_input_ms.clear();
      m.backward_weight_ms.clear();
      return;
    }
    m.backward_input_ms.push_back(layer.at("backward_input").at("median_ms").get<double>());
    m.backward_weight_ms.push_back(layer.at("backward_weight").at("median_ms").get<double>());
  }
}

// profile.json's layers' `key` (stored_bytes, weight_pending_bytes), or none where a layer
// lacks it.
std::vector<double> read_layer_bytes(const json& doc, const char* key) {
  std::vector<double> bytes;
  if (!doc.contains("layers")) return bytes;
  for (const json& layer : doc.at("layers")) {
    if (!layer.contains(key)) return {};
    bytes.push_back(layer.at(key).get<double>());
  }
  return bytes;
}

// profile.json's layers' mixtures of experts, or none where no layer has one.
std::vector<runtime::LayerMixtures> read_mixtures(const json& doc) {
  std::vector<runtime::LayerMixtures> mixtures;
  bool any = false;
  for (const json& layer : doc.value("layers", json::array())) {
    const bool has = layer.contains("mixtures");
    mixtures.push_back(has ? mixtures_from_json(layer.at("mixtures")) : runtime::LayerMixtures{});
    any |= has;
  }
  return any ? mixtures : std::vector<runtime::LayerMixtures>{};
}

// Reads profile.json beside `m.profile` into `m` (threads, the tensor split, recomputation, the
// zoo model and its tokens, the split backward, the stored bytes) and returns the rest.
ProfileReading read_profile_json(ModelSettings& m) {
  ProfileReading reading;
  const fs::path profile = fs::path(m.profile).parent_path() / "profile.json";
  std::error_code error;
  if (!fs::is_regular_file(profile, error)) return reading;
  try {
    const json doc = parse_json(read_file(profile));
    reading.path = profile.string();
    if (doc.contains("threads")) m.threads = std::max(1, doc.at("threads").get<int>());
    m.tensor = std::max(1, doc.value("tensor", 1));
    m.vocabulary_parallel = doc.value("vocabulary_parallel", false);
    if (doc.contains("sequence_parallel")) {
      m.sequence_parallel = doc.at("sequence_parallel").get<bool>();
    }
    m.activation_checkpointing = doc.value("activation_checkpointing", "none");
    m.recompute_every = std::max<long long>(1, doc.value("recompute_every", 1LL));
    m.zoo_model = doc.value("model", "");
    const auto shape = doc.value("input_shape", std::vector<long long>{});
    if (shape.size() == 1) m.tokens = shape.front();  // a sequence model's tokens
    const int stages = doc.contains("stages") ? static_cast<int>(doc.at("stages").size()) : 1;
    reading.processes = std::max(1, stages) * std::max(1, doc.value("co_located", 1));
    reading.cpu_clock = doc.value("clock", "wall") == "cpu";
    reading.step_ms = doc.at("whole_model").at("step").at("median_ms").get<double>();
    reading.after_idle = read_after_idle(doc);
    read_backward_split(doc, m);
    m.stored_bytes = read_layer_bytes(doc, "stored_bytes");
    if (!m.stored_bytes.empty()) {
      m.weight_pending_bytes = read_layer_bytes(doc, "weight_pending_bytes");
      m.backward_working_bytes = read_layer_bytes(doc, "backward_working_bytes");
    }
    m.mixtures = read_mixtures(doc);
  } catch (const std::exception&) {
    // an older profile without a step or after-idle timings, or not one of ours
  }
  return reading;
}

// A profile timed on the wall clock by more processes than the simulated machine has cores
// already contains each process's wait for a core; the simulator's own sharing of
// `cluster.cpu_cores` would add it a second time. Warned once per profile and core count.
void warn_if_cores_shared_twice(const ProfileReading& extras, double cpu_cores) {
  if (extras.path.empty() || extras.cpu_clock || cpu_cores <= 0 || extras.processes <= cpu_cores) {
    return;
  }
  static std::set<std::pair<std::string, double>> warned;
  if (!warned.insert({extras.path, cpu_cores}).second) return;
  std::fprintf(stderr,
               "warning: %s was timed on the wall clock by %d processes at once, more than "
               "cluster.cpu_cores (%g): its times include waiting for a core, which the "
               "simulator's sharing of the cores adds again (profile with --clock cpu)\n",
               extras.path.c_str(), extras.processes, cpu_cores);
}

// A file the spec names is opened when the spec is read, so that a wrong path is an error at
// the key that names it (and --dry-run catches it), not a bare path mid-study.
void require_readable(MapReader& reader, const std::string& key, const std::string& path) {
  if (!path.empty() && !readable_regular_file(path)) {
    reader.report(reader.child(key), key, "cannot open '" + path + "'");
  }
}

// The sharded systems' all-gather and reduce-scatter fits, where the spec gives them.
void read_measured_gathers(MapReader& cluster, ClusterSettings& settings) {
  for (const auto& [key, slot] : {std::pair{"gather_latency_us", &settings.gather_latency_us},
                                  std::pair{"scatter_latency_us", &settings.scatter_latency_us}}) {
    if (cluster.has(key)) *slot = cluster.get_double(key, 0.0, kZeroOrMore);
  }
  settings.gather_bandwidth = optional_positive(cluster, "gather_bandwidth");
  settings.scatter_bandwidth = optional_positive(cluster, "scatter_bandwidth");
}

// A spec's `model.activation_checkpointing` says what it means to simulate; the profile's backward
// times decide what is simulated, so the two must agree.
void check_recomputation_key(MapReader& model, const std::string& profiled) {
  if (!model.has("activation_checkpointing")) return;
  const std::string wanted =
      model.get_string("activation_checkpointing", std::nullopt, {"none", "full", "selective"});
  if (!wanted.empty() && wanted != profiled) {
    model.report(model.child("activation_checkpointing"), "activation_checkpointing",
                 "the profile recomputes " + profiled +
                     " (profile.json's activation_checkpointing): profile with `harness profile "
                     "layers --activation-checkpointing " +
                     wanted + "`");
  }
}

// simulate.model: the profile (checked readable now) and what its files add.
ModelSettings read_model(const YAML::Node& section, const SpecOrigin& origin,
                         ProfileReading& extras) {
  const std::string base = kSection;
  ModelSettings m;
  MapReader model(section["model"], base + ".model", origin);
  const std::string profile = model.get_string("profile", std::nullopt);
  m.profile = resolve_profile_path(profile);
  if (const std::string problem = profile.empty() ? "" : profile_problem(profile);
      !problem.empty()) {
    model.report(model.child("profile"), "profile", problem);
  }
  m.pbs = model.get_int("pbs", std::nullopt, 1, 1 << 30);
  m.batch_size = model.get_int("batch_size", m.pbs, 1, 1 << 30);
  extras = read_profile_json(m);
  m.step_ms = model.has("step_ms") ? model.get_double("step_ms", 0.0, kZeroOrMore) : extras.step_ms;
  check_recomputation_key(model, m.activation_checkpointing);
  if (model.get_bool("after_idle", true)) m.after_idle = extras.after_idle;
  model.finish();
  return m;
}

// simulate.cluster: the topology and every cost term's constant a spec may give.
ClusterSettings read_cluster(const YAML::Node& section, const SpecOrigin& origin) {
  const std::string base = kSection;
  ClusterSettings c;
  YAML::Node node = section["cluster"];
  MapReader cluster(node ? node : YAML::Node(YAML::NodeType::Map), base + ".cluster", origin);
  c.topology = cluster.get_string("topology", "");
  require_readable(cluster, "topology", c.topology);
  c.comm_profile = cluster.get_string("comm_profile", "");
  require_readable(cluster, "comm_profile", c.comm_profile);
  c.gpus_per_machine = cluster.get_int("gpus_per_machine", 0, 0, 1 << 20);
  c.intra_bandwidth = optional_positive(cluster, "intra_bandwidth");
  c.inter_bandwidth = optional_positive(cluster, "inter_bandwidth");
  c.inter_p2p_bandwidth = optional_positive(cluster, "inter_p2p_bandwidth");
  if (cluster.has("intra_latency_us")) {
    c.intra_latency_us = cluster.get_double("intra_latency_us", 0.0, kZeroOrMore);
  }
  if (cluster.has("inter_latency_us")) {
    c.inter_latency_us = cluster.get_double("inter_latency_us", 0.0, kZeroOrMore);
  }
  c.collective = cluster.get_string("collective", "ring", {"ring", "tree", "hierarchical"});
  c.p2p_duplex = cluster.get_string("p2p_duplex", "full", {"full", "half"});
  c.p2p_ready = cluster.get_string("p2p_ready", "separate", {"separate", "behind_sends"});
  c.p2p_sends = cluster.get_string("p2p_sends", "one", {"one", "per_peer"});
  c.cpu_cores = cluster.has("cpu_cores") ? cluster.get_double("cpu_cores", 0.0, kZeroOrMore) : 0.0;
  c.inter_burst_bytes = cluster.get_double("inter_burst_bytes", 0.0, kZeroOrMore);
  if (cluster.has("inter_burst_latency_us")) {
    c.inter_burst_latency_us = cluster.get_double("inter_burst_latency_us", 0.0, kZeroOrMore);
  }
  c.inter_burst_bandwidth = optional_positive(cluster, "inter_burst_bandwidth");
  c.inter_send_call_us = read_send_calls(cluster, "inter_send_call_us");
  if (cluster.has("intra_send_call_us")) {
    c.intra_send_call_us = read_send_calls(cluster, "intra_send_call_us");
  }
  c.inter_past_bucket_latency_us = cluster.get_double("inter_past_bucket_latency_us", 0.0, -1e9);
  read_measured_gathers(cluster, c);
  c.machines_per_host = cluster.get_int("machines_per_host", 1, 1, kMaxGpus);
  if (cluster.has("comm_cores_per_rank")) {
    c.comm_cores_per_rank = cluster.get_double("comm_cores_per_rank", 1.0, 0.0);
  }
  if (cluster.has("intra_comm_cores_per_rank")) {
    c.intra_comm_cores_per_rank = cluster.get_double("intra_comm_cores_per_rank", 1.0, 0.0);
  }
  c.bucket_copy_bandwidth = optional_positive(cluster, "bucket_copy_bandwidth");
  if (cluster.has("bucket_copy_latency_us")) {
    c.bucket_copy_latency_us = cluster.get_double("bucket_copy_latency_us", 0.0, kZeroOrMore);
  }
  cluster.finish();
  return c;
}

// simulate.run: the world, iterations, repeats, seed, noise and traced ranks.
RunSettings read_run(const YAML::Node& section, const SpecOrigin& origin) {
  const std::string base = kSection;
  RunSettings r;
  MapReader run(section["run"], base + ".run", origin);
  r.world_size = run.get_int("world_size", std::nullopt, 1, kMaxGpus);
  r.iterations = run.get_int("iterations", 10, 1, 1 << 20);
  r.repeats = run.get_int("repeats", 1, 1, 1000);
  r.seed = run.get_int("seed", 0, 0, (1LL << 62));
  r.noise_percent = run.has("noise") ? run.get_double("noise", 0.0, kZeroOrMore) : 0.0;
  if (r.noise_percent >= 100) {
    run.fail(run.child("noise"), "noise", "must be a percentage below 100");
  }
  r.trace_ranks = run.get_int("trace_ranks", 16, 0, 1 << 20);
  run.finish();
  return r;
}

PointSettings read_point(const YAML::Node& section, const SpecOrigin& origin) {
  const std::string base = kSection;
  PointSettings p;
  ProfileReading extras;
  p.model = read_model(section, origin, extras);
  p.cluster = read_cluster(section, origin);
  warn_if_cores_shared_twice(extras, p.cluster.cpu_cores);
  p.run = read_run(section, origin);
  if (YAML::Node node = section["ddp"]) {
    MapReader ddp(node, base + ".ddp", origin);
    p.bucket_mb = read_bucket_mb(ddp, "bucket_mb", 25);
    p.first_bucket_mb = read_bucket_mb(ddp, "first_bucket_mb", 1);
    ddp.finish();
  }
  if (YAML::Node node = section["pipeline"]) {
    MapReader pipeline(node, base + ".pipeline", origin);
    p.pipeline.micro_batches = pipeline.get_int("micro_batches", 0, 1, 1 << 20);
    p.pipeline.plan = pipeline.get_string("plan", "");
    p.pipeline.schedule =
        pipeline.get_string("schedule", "dapple", runtime::pipeline_schedule_names());
    pipeline.finish();
  }
  return p;
}

// "0-12", "3", or a list of ints: positions in the profile's topological order.
std::vector<int> read_layer_positions(const YAML::Node& node, const std::string& where) {
  std::vector<int> positions;
  auto bad = [&]() -> InputError {
    return InputError(where + ": layers must be \"first-last\", an index or a list of indices");
  };
  try {
    if (node.IsSequence()) {
      for (const auto& item : node) positions.push_back(item.as<int>());
    } else if (node.IsScalar()) {
      const auto [first, last] = runtime::parse_layer_range(node.Scalar());  // as train specs
      for (int i = first; i <= last; ++i) positions.push_back(i);
    } else {
      throw bad();
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception&) {
    throw bad();
  }
  if (positions.empty()) throw bad();
  return positions;
}

// One entry of simulate.systems; nothing when its errors were recorded rather than thrown.
// A pipeline system's `stages:` list: each stage's layers, and its ranks or replicas.
std::vector<InlineStage> read_inline_stages(MapReader& r, const YAML::Node& stages,
                                            const SpecOrigin& origin) {
  const std::string path = std::string(kSection) + ".systems";
  if (!stages.IsSequence() || stages.size() == 0) {
    r.fail(stages, "stages", "must be a non-empty list of {layers, ranks|replicas}");
  }
  std::vector<InlineStage> read;
  for (const auto& entry : stages) {
    MapReader stage(entry, path + ".stages", origin);
    InlineStage out;
    YAML::Node layers = stage.child("layers");
    if (!layers) {
      throw InputError(origin.where(entry, path + ".stages") + ": " + path +
                       ".stages: a stage needs 'layers'");
    }
    out.layer_positions =
        read_layer_positions(layers, origin.where(layers, path + ".stages.layers"));
    if (stage.has("ranks")) {
      for (long long rank : stage.get_int_list("ranks", std::nullopt, 0)) {
        out.ranks.push_back(static_cast<int>(rank));
      }
    } else {
      out.replicas = stage.get_int("replicas", 0, 1, 1 << 20);  // 0: an equal share
    }
    stage.finish();
    read.push_back(std::move(out));
  }
  return read;
}

// A pipeline system's keys: how its replicas hold the states, its tensor axis, schedule, stages.
void read_pipeline_keys(MapReader& r, const SpecOrigin& origin, SystemSettings& s) {
  const std::string path = std::string(kSection) + ".systems";
  s.mode = "";
  s.data.zero_stage = read_replica_zero_stage(r);
  if (r.has("tensor")) {  // the stages' layers split too
    s.tensor = read_tensor_axis(r);
    read_recompute_gather(r, s.tensor);
  }
  if (r.has("schedule")) {
    s.schedule = r.get_string("schedule", std::nullopt, runtime::pipeline_schedule_names());
  }
  if (r.has("stages_per_rank")) {
    s.stages_per_rank = static_cast<int>(r.get_int("stages_per_rank", 1, 1, 64));
  }
  if (r.has("plan")) s.plan = r.get_string("plan", std::nullopt);
  if (r.has("micro_batches")) s.micro_batches = r.get_int("micro_batches", 1, 1, 1 << 20);
  if (YAML::Node stages = r.child("stages"); stages && stages.IsScalar()) {
    s.balanced_stage_count = static_cast<int>(r.get_int("stages", 1, 1, 1 << 10));
  } else if (stages) {
    s.stages = read_inline_stages(r, stages, origin);
  }
  if (s.plan && (!s.stages.empty() || s.balanced_stage_count > 0)) {
    throw InputError(s.where + ": " + path +
                     ": a pipeline system takes 'plan' or 'stages', "
                     "not both");
  }
}

std::optional<SystemSettings> read_simulated_system(const YAML::Node& node,
                                                    const SpecOrigin& origin) {
  const std::string path = std::string(kSection) + ".systems";
  SystemSettings s;
  s.where = origin.where(node, path);
  if (node.IsScalar()) {  // a DDP mode name
    s.name = node.Scalar();
    s.kind = runtime::SystemKind::kDdp;
    s.mode = node.Scalar();
    if (s.mode != "overlap" && s.mode != "sync") {
      throw InputError(s.where + ": " + path + ": '" + s.mode +
                       "' is not a DDP mode (overlap, sync); use a map for other systems");
    }
    return s;
  }
  // The composed form (`mesh:`) is read as the short form it expands to.
  const std::optional<MeshForm> form = expand_mesh_form(node, path, origin);
  if (!form) return std::nullopt;
  s.mesh = form->mesh;
  MapReader r(form->entry, path, origin);
  r.locate_at(node);
  // "dp", the simulator's first name for DDP with gradient accumulation, stays a spelling of ddp.
  const std::string kind = r.get_string(
      "kind", "ddp", {"ddp", "dp", "expert_parallel", "pipeline", "sharded", "tensor_parallel"});
  s.kind = kind == "dp" ? runtime::SystemKind::kDdp : runtime::parse_system_kind(kind);
  // The kind decides which keys belong: none of the rest is judged against a stand-in kind.
  if (!r.ok()) return std::nullopt;
  s.name = r.get_string("name", std::nullopt);
  using runtime::SystemKind;
  if (s.kind == SystemKind::kSharded) {
    s.data = read_sharded_data_axis(r);
    if (r.has("bucket_mb")) s.bucket_mb = read_bucket_mb(r, "bucket_mb", 25);
  } else if (s.kind != SystemKind::kPipeline) {
    if (s.kind == SystemKind::kTensorParallel) {
      s.tensor = read_tensor_system_axis(r);
      s.data.zero_stage = read_replica_zero_stage(r);  // 3: FSDP x TP
    }
    if (s.kind == SystemKind::kExpertParallel) s.data.zero_stage = read_replica_zero_stage(r);
    s.mode = r.get_string("mode", "overlap", {"overlap", "sync"});
    if (r.has("bucket_mb")) s.bucket_mb = read_bucket_mb(r, "bucket_mb", 25);
  }
  if (s.kind == SystemKind::kDdp) s.accumulation = r.get_int("accumulation", 1, 1, 1 << 20);
  if (s.kind == SystemKind::kPipeline) read_pipeline_keys(r, origin, s);
  r.finish();
  if (!r.ok()) return std::nullopt;
  return s;
}

// `systems:` and the `baseline:` that names one of them.
void read_systems(const YAML::Node& section, MapReader& top, const SpecOrigin& origin,
                  SimulateSpec& spec) {
  const YAML::Node systems = top.child("systems");
  if (!systems || !systems.IsSequence() || systems.size() == 0) {
    top.child("baseline");
    throw origin.error(systems ? systems : section, std::string(kSection) + ".systems",
                       "simulate.systems: must be a non-empty list");
  }
  const size_t errors_before = origin.errors() ? origin.errors()->count() : 0;
  for (const auto& node : systems) {
    const auto read = [&] {
      std::optional<SystemSettings> system = read_simulated_system(node, origin);
      if (!system) return;
      for (const auto& other : spec.systems) {
        if (other.name == system->name) {
          throw InputError(
              system->where + ": simulate.systems: duplicate system name '" + system->name + "'",
              origin.position(node, std::string(kSection) + ".systems"));
        }
      }
      spec.systems.push_back(std::move(*system));
    };
    if (origin.errors() == nullptr) {
      read();
    } else {
      origin.errors()->collect(read);
    }
  }
  if (origin.errors() && origin.errors()->count() != errors_before) {
    top.child("baseline");  // names a system: checked once the systems read cleanly
    return;
  }
  spec.baseline = top.get_string("baseline", spec.systems.front().name);
  bool baseline_known = false;
  for (const auto& s : spec.systems) baseline_known |= s.name == spec.baseline;
  if (!baseline_known) {
    top.fail(top.child("baseline"), "baseline", "names no system ('" + spec.baseline + "')");
  }
}

std::vector<std::string> read_plots(MapReader& top) {
  std::vector<std::string> kinds;
  if (YAML::Node plots = top.child("plots")) {
    if (!plots.IsSequence()) top.fail(plots, "plots", "must be a list of figure kinds");
    for (const auto& kind : plots) {
      if (!kind.IsScalar()) top.fail(kind, "plots", "must be a list of figure kinds");
      kinds.push_back(kind.Scalar());
    }
  }
  return kinds;
}

}  // namespace

// Paths (inside the simulate map) a sweep may vary.
const std::vector<std::string>& simulate_sweepable() {
  static const std::vector<std::string> paths = {"run.world_size",
                                                 "model.batch_size",
                                                 "model.step_ms",
                                                 "model.after_idle",
                                                 "cluster.gpus_per_machine",
                                                 "cluster.intra_bandwidth",
                                                 "cluster.inter_bandwidth",
                                                 "cluster.inter_p2p_bandwidth",
                                                 "cluster.intra_latency_us",
                                                 "cluster.inter_latency_us",
                                                 "cluster.collective",
                                                 "cluster.p2p_duplex",
                                                 "cluster.p2p_ready",
                                                 "cluster.p2p_sends",
                                                 "cluster.inter_burst_bytes",
                                                 "cluster.inter_burst_latency_us",
                                                 "cluster.inter_burst_bandwidth",
                                                 "cluster.gather_latency_us",
                                                 "cluster.gather_bandwidth",
                                                 "cluster.scatter_latency_us",
                                                 "cluster.scatter_bandwidth",
                                                 "cluster.cpu_cores",
                                                 "cluster.machines_per_host",
                                                 "cluster.comm_cores_per_rank",
                                                 "cluster.intra_comm_cores_per_rank",
                                                 "cluster.bucket_copy_bandwidth",
                                                 "cluster.bucket_copy_latency_us",
                                                 "ddp.bucket_mb",
                                                 "ddp.first_bucket_mb",
                                                 "pipeline.micro_batches",
                                                 "pipeline.plan",
                                                 "pipeline.schedule",
                                                 "run.noise"};
  return paths;
}

SimulateSpec read_simulate_spec(const std::string& spec_path, YAML::Node root,
                                const std::vector<std::string>& overrides) {
  SpecOrigin origin(spec_path);
  // Every error of the spec as written is reported at once; the points of the sweep are then
  // read with their values in place, each stopping at its first error.
  SpecErrors errors(spec_path);
  origin.report_to(&errors);
  const SpecHeader header = read_spec_header(root, origin, overrides, kSection, kSection);
  SimulateSpec spec;
  spec.name = header.name;
  spec.output = header.output;
  // spec.yaml shows the spec as given; the points below write their values into the tree
  // itself (a clone would lose the file positions that errors name).
  spec.resolved = YAML::Clone(root);
  const YAML::Node section = header.section;
  if (!section) {
    errors.add(InputError(spec_path + ": a 'kind: simulate' spec needs a 'simulate' map"));
    errors.throw_if_any();
  }
  MapReader top(section, kSection, origin);
  for (const char* key : {"model", "cluster", "run", "ddp", "pipeline"}) top.child(key);
  for (const char* key : {"model", "run"}) {
    if (!top.has(key)) {
      errors.add(
          origin.error(section, kSection, std::string("simulate: missing key '") + key + "'"));
    }
  }
  errors.collect([&] { read_systems(section, top, origin, spec); });
  errors.collect([&] { spec.plots = read_plots(top); });
  std::vector<SweepAxis> axes;
  errors.collect([&] {
    axes = read_sweep_axes(top.child("sweep"), origin, "simulate.sweep", simulate_sweepable());
  });
  top.get_string("description", "");
  top.finish();
  if (errors.empty()) errors.collect([&] { read_point(section, origin); });
  errors.throw_if_any();
  origin.report_to(nullptr);

  expand_sweep(axes, section, [&](const SweepPoint& at) {
    SimPoint point;
    point.id = at.id;
    point.label = at.label;
    point.coordinates = at.coordinates;
    point.settings = read_point(section, origin);
    spec.points.push_back(std::move(point));
  });
  return spec;
}

}  // namespace harness
