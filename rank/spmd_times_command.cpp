#include "rank/spmd_times_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "common/json_file.h"
#include "rank/layer_profile_command.h"
#include "rank/model_flags.h"
#include "runtime/models/model_catalog.h"
#include "runtime/profile/spmd_operator_times.h"

namespace harness {
namespace {

using nlohmann::json;

struct SpmdTimesOptions {
  ModelFlags model;
  runtime::SpmdTimesRequest request;
  std::vector<std::string> plans;  // spmd_plan.json files
};

runtime::ModelOptions model_options(const ModelFlags& flags) {
  runtime::ModelOptions options;
  options.input_shape = parse_shape(flags.input_shape);
  const runtime::ModelEntry* entry = runtime::find_model(flags.model);
  if (entry == nullptr) throw InputError("spmd-times: no model '" + flags.model + "' in the zoo");
  if (options.input_shape.empty()) options.input_shape = entry->default_input_shape;
  options.num_classes = flags.num_classes;
  options.depth = flags.depth;
  options.width = flags.width;
  if (!flags.moe.empty()) options.moe = runtime::parse_moe_flag(flags.moe);
  if (!flags.decoder.empty()) options.decoder = runtime::parse_decoder_flag(flags.decoder);
  return options;
}

json times_answer(SpmdTimesOptions& o) {
  o.request.model = o.model.model;
  std::vector<std::vector<runtime::SpmdStep>> plans;
  std::vector<std::vector<std::string>> names;
  runtime::SpmdTimes times;
  try {
    o.request.options = model_options(o.model);
    for (const std::string& path : o.plans) {
      plans.push_back(runtime::read_spmd_steps(read_json_file(path)));
      names.emplace_back();
      for (const auto& step : plans.back()) names.back().push_back(step.name);
    }
    times = runtime::time_spmd_operators(o.request, plans);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("spmd-times: ") + e.what());
  }
  json answer = {{"plans", json::array()},
                 {"step_s_per_parameter_byte", times.step_seconds_per_parameter_byte}};
  for (size_t p = 0; p < times.plans.size(); ++p) {
    json operators = json::array();
    for (size_t i = 0; i < times.plans[p].size(); ++i) {
      operators.push_back({{"name", names[p][i]},
                           {"forward_s", times.plans[p][i].forward},
                           {"backward_s", times.plans[p][i].backward}});
    }
    answer["plans"].push_back(std::move(operators));
  }
  return answer;
}

}  // namespace

void add_spmd_times_command(CLI::App& app) {
  auto o = std::make_shared<SpmdTimesOptions>();
  auto* sub = app.add_subcommand(
      "spmd-times", "Each operator's time alone under SPMD plans, one rank's part, as JSON");
  add_model_flags(*sub, o->model);
  sub->add_option("--loss", o->request.loss, "cross_entropy or mse");
  sub->add_option("--batch", o->request.batch, "The global batch")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option("--ranks", o->request.ranks, "Ranks the plans split over")
      ->required()
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--repetitions", o->request.repetitions, "Timed runs of each operator")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--threads", o->request.threads, "Intra-op threads")->check(CLI::Range(1, 1024));
  sub->add_option("--seed", o->request.seed, "The model's and the batch's seed");
  sub->add_option("--optimizer", o->request.optimizer.name, "Whose step is timed: sgd or adamw")
      ->check(CLI::IsMember({"sgd", "adamw"}));
  sub->add_option("--momentum", o->request.optimizer.momentum, "sgd's momentum");
  sub->add_option("--plan", o->plans, "spmd_plan.json (repeat for more)")->required();
  sub->callback([o] { std::cout << json_text(times_answer(*o)) << "\n"; });
}

}  // namespace harness
