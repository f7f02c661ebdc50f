#include "harness/spec/spmd_search_spec.h"

#include <stdexcept>

#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/profile/spmd_costs_file.h"
#include "harness/spec/model_keys.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/yaml_reader.h"
#include "runtime/models/model_catalog.h"

namespace harness {
namespace {

constexpr const char* kSearchSection = "spmd_search";

std::vector<std::string> searchable_models() {
  std::vector<std::string> names;
  for (const auto& name : runtime::model_names()) {
    if (runtime::has_spmd_graph(name)) names.push_back(name);
  }
  return names;
}

// One model the search runs on: its label, the zoo's shape keys, the batch and the ranks.
SearchedModel read_searched_model(const YAML::Node& node, const std::string& path,
                                  const SpecOrigin& origin) {
  MapReader reader(node, path, origin);
  SearchedModel searched;
  searched.label = reader.get_string("label", std::nullopt);
  if (const std::string problem = folder_name_problem(searched.label); !problem.empty()) {
    reader.report(reader.child("label"), "label",
                  "cannot name a results folder: " + problem + " " + std::string(kFolderNameRule));
  }
  ModelConfig& model = searched.model;
  model.name = reader.get_string("name", std::nullopt, searchable_models());
  read_zoo_shape_keys(reader, model);
  if (model.name == "llama" && model.num_classes > 0) {
    reader.report(reader.child("num_classes"), "num_classes",
                  "llama predicts its vocabulary (vocab), it has no classes");
  }
  searched.global_batch = reader.get_int("global_batch", std::nullopt, 1, kMaxSearchedBatch);
  searched.ranks = reader.get_int("ranks", std::nullopt, 1, kMaxGpus);
  check_zoo_shape(reader, model);
  reader.finish();
  return searched;
}

NoiseTable read_noise_table(const YAML::Node& node, const std::string& path,
                            const SpecOrigin& origin, SpecErrors& errors) {
  MapReader reader(node, path, origin);
  NoiseTable table;
  const YAML::Node models = reader.child("models");
  if (!models || !models.IsSequence() || models.size() == 0) {
    reader.report(models ? models : node, "models",
                  "expected a non-empty list of models, got " + describe_node(models));
  } else {
    for (size_t i = 0; i < models.size(); ++i) {
      errors.collect([&] {
        table.models.push_back(read_searched_model(models[i], path + ".models", origin));
      });
    }
  }
  table.levels_percent = reader.get_double_list("levels", std::nullopt, MapReader::kZeroOrMore);
  for (double level : table.levels_percent) {
    if (level >= 100) {
      reader.report(reader.child("levels"), "levels",
                    "a level is a percent below 100 (a factor in [1 - f, 1 + f) stays positive)");
      break;
    }
  }
  table.comm_scales = reader.get_double_list("comm_scales", std::vector<double>{}, 0.0);
  table.seeds = reader.get_int("seeds", 10, 1, 100000);
  table.first_seed = reader.get_int("first_seed", 1, 0, 1LL << 62);
  reader.finish();
  return table;
}

SearchTimeFigure read_search_time(const YAML::Node& node, const std::string& path,
                                  const SpecOrigin& origin) {
  MapReader reader(node, path, origin);
  SearchTimeFigure figure;
  figure.model = read_searched_model(reader.child("model"), path + ".model", origin);
  figure.depths = reader.get_int_list("depths", std::vector<long long>{}, 1);
  figure.ranks = reader.get_int_list("ranks", std::vector<long long>{}, 1);
  // Each depth as the zoo would build it (a mixture every moe_every blocks needs as many).
  const ModelConfig& model = figure.model.model;
  for (long long depth : figure.depths) {
    try {
      runtime::check_model_options(
          model.name, std::vector<int64_t>(model.input_shape.begin(), model.input_shape.end()),
          depth, model.width, model.moe, model.decoder);
    } catch (const std::invalid_argument& e) {
      reader.report(reader.child("depths"), "depths",
                    "depth " + std::to_string(depth) + ": " + e.what());
      break;
    }
  }
  for (long long ranks : figure.ranks) {
    if (ranks > kMaxGpus) {
      reader.report(reader.child("ranks"), "ranks",
                    "every entry must be <= " + std::to_string(kMaxGpus));
    }
  }
  figure.repeats = reader.get_int("repeats", 5, 1, 1000);
  reader.finish();
  return figure;
}

// The section's costs, checked by reading comm.json now, so that --dry-run catches it.
void read_costs(MapReader& section, SpmdSearchSpec& spec) {
  spec.comm = section.get_string("comm", std::nullopt);
  spec.gflops = section.get_double("gflops", std::nullopt, 0.0);
  if (!section.ok()) return;
  try {
    read_spmd_costs(spec.comm, spec.gflops * 1e9);
  } catch (const InputError& e) {
    section.report(section.child("comm"), "comm", e.what());
  }
}

}  // namespace

SpmdSearchSpec read_spmd_search_spec(const std::string& spec_path, YAML::Node root,
                                     const std::vector<std::string>& overrides, bool quick) {
  SpecOrigin origin(spec_path);
  SpecErrors errors(spec_path);
  origin.report_to(&errors);
  const SpecHeader header =
      read_spec_header(root, origin, overrides, kSearchSection, kSearchSection,
                       quick ? QuickBlock::kApplied : QuickBlock::kKept);
  SpmdSearchSpec spec;
  spec.name = header.name;
  spec.output = header.output;
  spec.resolved = YAML::Clone(root);
  if (!header.section || !header.section.IsMap()) {
    errors.add(InputError(spec_path + ": a 'kind: spmd_search' spec needs a 'spmd_search' map"));
    errors.throw_if_any();
  }
  MapReader section(header.section, kSearchSection, origin);
  read_costs(section, spec);
  if (const YAML::Node node = section.child("noise")) {
    errors.collect(
        [&] { spec.noise = read_noise_table(node, "spmd_search.noise", origin, errors); });
  }
  if (const YAML::Node node = section.child("search_time")) {
    errors.collect(
        [&] { spec.search_time = read_search_time(node, "spmd_search.search_time", origin); });
  }
  if (!section.has("noise") && !section.has("search_time")) {
    section.report_map("spmd_search: give noise (Table IV), search_time (Figure 12) or both");
  }
  section.finish();
  errors.throw_if_any();
  return spec;
}

}  // namespace harness
