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
#include "common/ports.h"
#include "rank/model_flags.h"
#include "rank/profile_processes.h"
#include "runtime/models/model_catalog.h"
#include "runtime/profile/layer_profiler.h"
#include "runtime/profile/spmd_operator_times.h"
#include "runtime/protocol/cpu_pinning.h"

namespace harness {
namespace {

using nlohmann::json;

struct SpmdTimesOptions {
  ModelFlags model;
  runtime::SpmdTimesRequest request;
  // Processes that time the same operators at the same moments, as ranks sharing this
  // machine's cores do: this one and co_located - 1 copies (lockstep_rank > 0), each barrier
  // before a timed run.
  int co_located = 1;
  int lockstep_rank = 0;
  runtime::ProfileMeeting meeting;
  std::vector<std::string> plans;  // spmd_plan.json files
};

runtime::ModelOptions model_options(const ModelFlags& flags) {
  runtime::ModelOptions options;
  options.input_shape = input_shape_of(flags);
  const runtime::ModelEntry* entry = runtime::find_model(flags.model);
  if (entry == nullptr) throw InputError("spmd-times: no model '" + flags.model + "' in the zoo");
  if (options.input_shape.empty()) options.input_shape = entry->default_input_shape;
  options.num_classes = flags.num_classes;
  options.depth = flags.depth;
  options.width = flags.width;
  options.moe = moe_shape_of(flags);
  options.decoder = decoder_shape_of(flags);
  return options;
}

struct MeasuredPlans {
  runtime::SpmdTimes times;
  std::vector<std::vector<std::string>> names;  // each plan's operators
};

MeasuredPlans measure(SpmdTimesOptions& o) {
  o.request.model = o.model.model;
  std::vector<std::vector<runtime::SpmdStep>> plans;
  MeasuredPlans measured;
  try {
    o.request.options = model_options(o.model);
    for (const std::string& path : o.plans) {
      plans.push_back(runtime::read_spmd_steps(read_json_file(path)));
      measured.names.emplace_back();
      for (const auto& step : plans.back()) measured.names.back().push_back(step.name);
    }
    measured.times = runtime::time_spmd_operators(o.request, plans);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("spmd-times: ") + e.what());
  }
  return measured;
}

// The command's answer, which is also what a co-located copy hands to process 0.
json answer_json(const MeasuredPlans& measured) {
  const runtime::SpmdTimes& times = measured.times;
  json answer = {{"plans", json::array()},
                 {"step_s_per_parameter_byte", times.step_seconds_per_parameter_byte},
                 {"step_cpu_s_per_parameter_byte", times.step_cpu_seconds_per_parameter_byte}};
  for (size_t p = 0; p < times.plans.size(); ++p) {
    json operators = json::array();
    for (size_t i = 0; i < times.plans[p].size(); ++i) {
      const auto& op = times.plans[p][i];
      operators.push_back({{"name", measured.names[p][i]},
                           {"forward_s", op.forward},
                           {"backward_s", op.backward},
                           {"forward_cpu_s", op.forward_cpu},
                           {"backward_cpu_s", op.backward_cpu}});
    }
    answer["plans"].push_back(std::move(operators));
  }
  return answer;
}

runtime::SpmdTimes times_of_answer(const json& answer) {
  runtime::SpmdTimes times;
  times.step_seconds_per_parameter_byte = answer.at("step_s_per_parameter_byte").get<double>();
  times.step_cpu_seconds_per_parameter_byte =
      answer.at("step_cpu_s_per_parameter_byte").get<double>();
  for (const json& operators : answer.at("plans")) {
    times.plans.emplace_back();
    for (const json& op : operators) {
      times.plans.back().push_back(
          {op.at("forward_s").get<double>(), op.at("backward_s").get<double>(),
           op.at("forward_cpu_s").get<double>(), op.at("backward_cpu_s").get<double>()});
    }
  }
  return times;
}

// A copy's arguments: everything this process was given, and where to meet it.
std::vector<std::string> copy_arguments(const SpmdTimesOptions& o, int rank) {
  const runtime::SpmdTimesRequest& r = o.request;
  std::vector<std::string> args = {"spmd-times"};
  for (auto& flag : model_flag_arguments(o.model)) args.push_back(std::move(flag));
  args.insert(args.end(), {"--loss",          r.loss,
                           "--batch",         std::to_string(r.batch),
                           "--ranks",         std::to_string(r.ranks),
                           "--repetitions",   std::to_string(r.repetitions),
                           "--threads",       std::to_string(r.threads),
                           "--seed",          std::to_string(r.seed),
                           "--optimizer",     r.optimizer.name,
                           "--momentum",      std::to_string(r.optimizer.momentum),
                           "--co-located",    std::to_string(o.co_located),
                           "--lockstep-rank", std::to_string(rank),
                           "--lockstep-port", std::to_string(o.meeting.port),
                           "--lockstep-key",  o.meeting.key});
  for (const std::string& plan : o.plans) args.insert(args.end(), {"--plan", plan});
  return args;
}

// Process 0 of co-located copies: its own times and theirs, combined as the run's ranks meet
// them (runtime::slowest_of) on the cores this process may use.
json slowest_answer(SpmdTimesOptions& o) {
  const auto lockstep = runtime::make_lockstep_meeting(o.meeting, 0, o.co_located);
  o.request.before_each = lockstep.barrier;
  MeasuredPlans measured = measure(o);
  std::vector<runtime::SpmdTimes> copies;
  for (const std::string& answer : lockstep.gather(json_text(answer_json(measured)))) {
    copies.push_back(times_of_answer(json::parse(answer)));
  }
  measured.times = runtime::slowest_of(copies, static_cast<int>(runtime::allowed_cpus().size()));
  return answer_json(measured);
}

// Prints the answer (a copy prints nothing), with the copies running beside this process.
void run_times(SpmdTimesOptions& o, const std::string& executable) {
  if (o.lockstep_rank > 0) {
    const auto lockstep = runtime::make_lockstep_meeting(o.meeting, o.lockstep_rank, o.co_located);
    o.request.before_each = lockstep.barrier;
    lockstep.gather(json_text(answer_json(measure(o))));
    return;
  }
  std::vector<std::vector<std::string>> copy_args;
  std::vector<std::string> names;
  if (o.co_located > 1) o.meeting = {pick_free_port(), new_rendezvous_key()};
  for (int rank = 1; rank < o.co_located; ++rank) {
    copy_args.push_back(copy_arguments(o, rank));
    names.push_back("co-located copy " + std::to_string(rank));
  }
  const ProfileProcesses running(executable, copy_args, names);
  const json answer = o.co_located > 1 ? slowest_answer(o) : answer_json(measure(o));
  std::cout << json_text(answer) << "\n";
}

}  // namespace

void add_spmd_times_command(CLI::App& app, const std::string& executable) {
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
  sub->add_option("--co-located", o->co_located,
                  "Processes timing in lockstep, as ranks sharing this machine's cores")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--lockstep-rank", o->lockstep_rank)->group("");
  sub->add_option("--lockstep-port", o->meeting.port)->group("");
  sub->add_option("--lockstep-key", o->meeting.key)->group("");
  sub->callback([o, executable] { run_times(*o, executable); });
}

}  // namespace harness
