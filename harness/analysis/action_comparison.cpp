#include "harness/analysis/action_comparison.h"

#include <algorithm>
#include <map>

#include "common/input_error.h"
#include "common/json_file.h"
#include "common/statistics.h"
#include "common/text_util.h"
#include "harness/analysis/trace_merge.h"
#include "harness/results/run_status.h"
#include "harness/results/run_summary.h"
#include "runtime/pipeline/schedule_csv.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

const char* action_part_name(ActionPart part) {
  switch (part) {
    case ActionPart::kForward:
      return "forward";
    case ActionPart::kBackward:
      return "backward";
    case ActionPart::kWeight:
      return "weight";
    case ActionPart::kSend:
      return "send";
    case ActionPart::kGradientSum:
      return "gradient_sum";
    case ActionPart::kStep:
      return "step";
    case ActionPart::kWaiting:
      return "waiting";
  }
  return "?";
}

RankActionTimes ActionComparison::miss() const {
  RankActionTimes mean;
  for (const RankActions& r : ranks) {
    for (ActionPart part : kActionParts) mean[part] += r.simulated[part] - r.measured[part];
    mean.iteration_ms += r.simulated.iteration_ms - r.measured.iteration_ms;
  }
  const double n = static_cast<double>(std::max<size_t>(1, ranks.size()));
  for (double& ms : mean.ms) ms /= n;
  mean.iteration_ms /= n;
  return mean;
}

namespace {

// One side's iteration (RankActions::measured or ::simulated), mean over the ranks.
double mean_iteration_ms(const std::vector<RankActions>& ranks,
                         RankActionTimes RankActions::*side) {
  double sum = 0;
  for (const RankActions& r : ranks) sum += (r.*side).iteration_ms;
  return ranks.empty() ? 0 : sum / static_cast<double>(ranks.size());
}

}  // namespace

double ActionComparison::measured_iteration_ms() const {
  return mean_iteration_ms(ranks, &RankActions::measured);
}

double ActionComparison::simulated_iteration_ms() const {
  return mean_iteration_ms(ranks, &RankActions::simulated);
}

namespace {

fs::path raw_folder(const fs::path& results) {
  if (!fs::is_directory(results / "raw")) {
    throw InputError(results.string() + ": not a results folder (no raw/ in it)");
  }
  return results / "raw";
}

std::vector<fs::path> sorted_subfolders(const fs::path& folder, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with(prefix)) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::path pipeline_rank_file(const fs::path& repeat, long long rank) {
  return repeat / ("pipeline_rank" + std::to_string(rank) + ".json");
}

// The F, B-or-I and W actions of a rank's list, from its schedule_order.
void count_actions(const std::string& order, RankActions& rank) {
  const runtime::ComputeActionCounts counts =
      runtime::count_compute_actions(runtime::parse_actions(order));
  rank.forwards = counts.forwards;
  rank.backwards = counts.fulls + counts.inputs;
  rank.weights = counts.weights;
}

// Waiting is the part of the iteration no other part covers, on either side.
void set_waiting_to_the_rest(RankActionTimes& t) {
  double busy = 0;
  for (ActionPart part : kActionParts) {
    if (part != ActionPart::kWaiting) busy += t[part];
  }
  t[ActionPart::kWaiting] = t.iteration_ms - busy;
}

// One measured iteration of pipeline_rank<r>.json, split into the parts.
RankActionTimes iteration_parts(const json& it) {
  RankActionTimes t;
  const double weight = it.value("backward_weight_ms", 0.0);
  t[ActionPart::kForward] = it.at("forward_ms").get<double>();
  t[ActionPart::kBackward] = it.at("backward_ms").get<double>() - weight;
  t[ActionPart::kWeight] = weight;
  t[ActionPart::kSend] = it.value("send_ms", 0.0);
  t[ActionPart::kGradientSum] = it.value("allreduce_ms", 0.0);
  t[ActionPart::kStep] = it.value("step_ms", 0.0);
  t.iteration_ms = it.at("iteration_ms").get<double>();
  set_waiting_to_the_rest(t);
  t.recv_wait_ms = it.value("recv_wait_ms", 0.0);
  return t;
}

// A rank's measured parts: each one's median over its iterations.
RankActionTimes median_parts(const std::vector<RankActionTimes>& iterations) {
  RankActionTimes median;
  const auto of = [&](auto field) {
    std::vector<double> values;
    for (const RankActionTimes& t : iterations) values.push_back(field(t));
    return percentile(std::move(values), 50);
  };
  for (ActionPart part : kActionParts) {
    median[part] = of([&](const RankActionTimes& t) { return t[part]; });
  }
  median.iteration_ms = of([](const RankActionTimes& t) { return t.iteration_ms; });
  median.recv_wait_ms = of([](const RankActionTimes& t) { return *t.recv_wait_ms; });
  return median;
}

// The measured side of one system: its ranks, from every repeat holding pipeline_rank0.json
// that did not fail or stop (as the study's pipeline table counts them). Empty when the system
// is not a pipeline.
ActionComparison measured_actions(const fs::path& system_folder) {
  ActionComparison run;
  std::map<long long, std::vector<RankActionTimes>> iterations;
  for (const fs::path& repeat : sorted_subfolders(system_folder, "rep")) {
    if (!fs::exists(pipeline_rank_file(repeat, 0))) continue;
    const std::optional<RunOutcome> outcome = read_run_outcome(repeat);
    if (outcome && *outcome != RunOutcome::kComplete) continue;
    const json first = read_json_file(pipeline_rank_file(repeat, 0));
    const long long world = first.at("world_size").get<long long>();
    for (long long r = 0; r < world; ++r) {
      const fs::path file = pipeline_rank_file(repeat, r);
      const json info = r == 0 ? first : read_json_file(file);
      try {
        if (run.ranks.size() < static_cast<size_t>(world)) {
          RankActions rank;
          rank.rank = r;
          rank.stages = info.at("stages_here").get<std::vector<int>>();
          count_actions(info.at("schedule_order").get<std::string>(), rank);
          run.ranks.push_back(std::move(rank));
          run.schedule = info.at("schedule").get<std::string>();
        }
        for (const json& it : info.at("iterations")) iterations[r].push_back(iteration_parts(it));
      } catch (const json::exception& e) {
        throw InputError(file.string() + ": not a pipeline rank's file: " + e.what());
      } catch (const std::invalid_argument& e) {
        throw InputError(file.string() + ": its schedule_order: " + e.what());
      }
    }
  }
  for (RankActions& rank : run.ranks) {
    if (iterations[rank.rank].empty()) {
      throw InputError(pipeline_rank_file(system_folder, rank.rank).string() +
                       ": no measured iterations");
    }
    rank.measured = median_parts(iterations[rank.rank]);
    const size_t count = iterations[rank.rank].size();
    run.measured_iterations = rank.rank == 0 ? count : std::min(run.measured_iterations, count);
  }
  return run;
}

// The parts of a rank's simulated iteration: its trace's events, its samples' iteration.
RankActionTimes simulated_parts(const fs::path& repeat, long long rank) {
  const fs::path file = repeat / ("trace_rank" + std::to_string(rank) + ".json");
  if (!fs::exists(file)) {
    throw InputError(repeat.string() + ": no trace of rank " + std::to_string(rank) +
                     " (simulate with simulate.run.trace_ranks at least the world size)");
  }
  std::vector<std::string> warnings;
  const RankTrace trace = read_rank_trace(file, warnings);
  RankActionTimes t;
  for (const TraceSpan& span : trace.spans) {
    const double ms = (span.end_us - span.start_us) / 1000;
    const std::string& c = span.category;
    if (c == "forward") t[ActionPart::kForward] += ms;
    if (c == "backward") {
      t[span.name.starts_with("bucket copy") ? ActionPart::kGradientSum : ActionPart::kBackward] +=
          ms;
    }
    if (c == "backward_weight") t[ActionPart::kWeight] += ms;
    if (c == "step") t[ActionPart::kStep] += ms;
    if (c == "send" && span.name.starts_with("send call")) t[ActionPart::kSend] += ms;
    if (c == "allreduce" || c == "reducescatter" || c == "allgather") {
      t[ActionPart::kGradientSum] += ms;
    }
  }
  const auto samples = read_sample_file(repeat / ("rank" + std::to_string(rank) + ".csv"));
  t.iteration_ms = percentile(samples.at("iteration"), 50);
  set_waiting_to_the_rest(t);
  return t;
}

// The mean of the simulations' parts for every rank of `run`.
void add_simulations(ActionComparison& run, const std::vector<fs::path>& simulated) {
  for (const fs::path& results : simulated) {
    const fs::path repeat = raw_folder(results) / run.point / run.system / "rep0";
    if (!fs::is_directory(repeat)) {
      throw InputError(results.string() + ": no simulation of " + run.point + " / " + run.system +
                       " (no " + repeat.string() + ")");
    }
    for (RankActions& rank : run.ranks) {
      const RankActionTimes t = simulated_parts(repeat, rank.rank);
      for (ActionPart part : kActionParts) rank.simulated[part] += t[part] / simulated.size();
      rank.simulated.iteration_ms += t.iteration_ms / simulated.size();
    }
  }
  run.simulations = simulated.size();
}

}  // namespace

std::vector<ActionComparison> compare_actions(const fs::path& measured,
                                              const std::vector<fs::path>& simulated,
                                              const std::string& system) {
  if (simulated.empty()) throw InputError("no simulated results folder to compare with");
  for (const fs::path& results : simulated) raw_folder(results);
  std::vector<ActionComparison> out;
  for (const fs::path& point : sorted_subfolders(raw_folder(measured), "p")) {
    for (const fs::path& folder : sorted_subfolders(point, "")) {
      if (!system.empty() && folder.filename() != system) continue;
      ActionComparison run = measured_actions(folder);
      if (run.ranks.empty()) continue;
      run.point = point.filename().string();
      run.system = folder.filename().string();
      add_simulations(run, simulated);
      out.push_back(std::move(run));
    }
  }
  if (out.empty()) {
    throw InputError(measured.string() + ": no pipeline run" +
                     (system.empty() ? "" : " of system " + system) +
                     " (no raw/<point>/<system>/rep<k>/pipeline_rank0.json)");
  }
  return out;
}

namespace {

std::string signed_ms(double ms) { return (ms >= 0 ? "+" : "") + format_fixed(ms, 1); }

std::string pair_cell(double measured, double simulated, int decimals) {
  return format_fixed(measured, decimals) + " / " + format_fixed(simulated, decimals);
}

// Per action where the rank has actions of the part, else "-".
std::string per_action_cell(const RankActions& r, ActionPart part, int actions) {
  if (actions == 0) return "-";
  return pair_cell(r.measured[part] / actions, r.simulated[part] / actions, 2);
}

std::string rank_row(const RankActions& r) {
  std::vector<std::string> stages;
  for (int s : r.stages) stages.push_back(std::to_string(s));
  const RankActionTimes& m = r.measured;
  const RankActionTimes& s = r.simulated;
  std::string waiting = format_fixed(m[ActionPart::kWaiting], 1);
  if (m.recv_wait_ms) waiting += " (" + format_fixed(*m.recv_wait_ms, 1) + ")";
  waiting += " / " + format_fixed(s[ActionPart::kWaiting], 1);
  return "| " + std::to_string(r.rank) + " | " + join(stages, ",") + " | " +
         std::to_string(r.forwards) + "/" + std::to_string(r.backwards) + "/" +
         std::to_string(r.weights) + " | " + per_action_cell(r, ActionPart::kForward, r.forwards) +
         " | " + per_action_cell(r, ActionPart::kBackward, r.backwards) + " | " +
         per_action_cell(r, ActionPart::kWeight, r.weights) + " | " +
         pair_cell(m[ActionPart::kSend], s[ActionPart::kSend], 1) + " | " +
         pair_cell(m[ActionPart::kGradientSum], s[ActionPart::kGradientSum], 1) + " | " +
         pair_cell(m[ActionPart::kStep], s[ActionPart::kStep], 1) + " | " + waiting + " | " +
         pair_cell(m.iteration_ms, s.iteration_ms, 1) + " |\n";
}

std::string miss_line(const ActionComparison& c) {
  const RankActionTimes miss = c.miss();
  std::vector<std::string> parts;
  for (ActionPart part : kActionParts) {
    parts.push_back(std::string(action_part_name(part)) + " " + signed_ms(miss[part]));
  }
  return "The miss, simulated less measured, ms an iteration (mean over ranks): " +
         join(parts, ", ") + "; iteration " + signed_ms(miss.iteration_ms) + ".\n";
}

}  // namespace

std::string actions_markdown(const std::vector<ActionComparison>& comparisons) {
  std::string md;
  for (const ActionComparison& c : comparisons) {
    const double measured = c.measured_iteration_ms(), simulated = c.simulated_iteration_ms();
    md += "### " + c.point + " / " + c.system + " (" + c.schedule + "): measured " +
          format_fixed(measured, 1) + " ms, simulated " + format_fixed(simulated, 1) + " ms (" +
          signed_ms(100 * (simulated - measured) / measured) + "%)\n\n";
    md += "Measured: each part's median over " + std::to_string(c.measured_iterations) +
          " iterations a rank; simulated: the mean of " + std::to_string(c.simulations) +
          " simulation(s). Cells: measured / simulated; F, B or I and W in ms an action, the "
          "rest in ms an iteration; waiting's measured part blocked in receives in brackets.\n\n";
    md +=
        "| rank | stages | F/B/W actions | F | B or I | W | sends | gradient sum | step | waiting "
        "| iteration |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const RankActions& r : c.ranks) md += rank_row(r);
    md += "\n" + miss_line(c) + "\n";
  }
  return md;
}

namespace {

json times_json(const RankActionTimes& t) {
  json out = json::object();
  for (ActionPart part : kActionParts) out[action_part_name(part)] = t[part];
  out["iteration"] = t.iteration_ms;
  if (t.recv_wait_ms) out["recv_wait"] = *t.recv_wait_ms;
  return out;
}

}  // namespace

json actions_json(const std::vector<ActionComparison>& comparisons) {
  json runs = json::array();
  for (const ActionComparison& c : comparisons) {
    json ranks = json::array();
    for (const RankActions& r : c.ranks) {
      ranks.push_back(
          {{"rank", r.rank},
           {"stages", r.stages},
           {"actions", {{"forward", r.forwards}, {"backward", r.backwards}, {"weight", r.weights}}},
           {"measured_ms", times_json(r.measured)},
           {"simulated_ms", times_json(r.simulated)}});
    }
    runs.push_back({{"point", c.point},
                    {"system", c.system},
                    {"schedule", c.schedule},
                    {"measured_iterations", c.measured_iterations},
                    {"simulations", c.simulations},
                    {"measured_iteration_ms", c.measured_iteration_ms()},
                    {"simulated_iteration_ms", c.simulated_iteration_ms()},
                    {"miss_ms", times_json(c.miss())},
                    {"ranks", std::move(ranks)}});
  }
  return {{"runs", std::move(runs)}};
}

}  // namespace harness
