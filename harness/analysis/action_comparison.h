// Where a simulated pipeline iteration parts from the run it predicts, rank by rank and action
// kind by action kind. Each side's iteration is split into the same parts: forward, backward
// (B, or I where the schedule splits it), W, send calls, the replicas' gradient sum, the step,
// and waiting (the rest: blocked in receives, between actions). The parts add up to the rank's
// iteration on both sides, so their differences add up to the miss and say where it is.
//
// Measured: a run's raw/<point>/<system>/rep<k>/pipeline_rank<r>.json, each part's median over
// every measured iteration of every repeat that did not fail or stop (waiting taken per iteration
// as the rest, then its median; medians need not add up exactly). Simulated: a simulated run's
// trace_rank<r>.json (its one iteration: the compute lane's events by category, send calls as
// sends, bucket copies and collectives as the gradient sum) and the median iteration of its
// rank<r>.csv. Several simulations of one run (a validation's profiles taken before and after it)
// are averaged.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness {

enum class ActionPart { kForward, kBackward, kWeight, kSend, kGradientSum, kStep, kWaiting };
inline constexpr size_t kActionPartCount = 7;
inline constexpr std::array<ActionPart, kActionPartCount> kActionParts = {
    ActionPart::kForward,     ActionPart::kBackward, ActionPart::kWeight, ActionPart::kSend,
    ActionPart::kGradientSum, ActionPart::kStep,     ActionPart::kWaiting};
const char* action_part_name(ActionPart part);  // "forward", ..., "gradient_sum", "waiting"

// One rank's iteration, milliseconds per part.
struct RankActionTimes {
  std::array<double, kActionPartCount> ms{};
  double iteration_ms = 0;
  std::optional<double> recv_wait_ms;  // measured: the part of waiting blocked in receives

  double& operator[](ActionPart part) { return ms[static_cast<size_t>(part)]; }
  double operator[](ActionPart part) const { return ms[static_cast<size_t>(part)]; }
};

struct RankActions {
  long long rank = 0;
  std::vector<int> stages;                       // the model stages the rank holds
  int forwards = 0, backwards = 0, weights = 0;  // F, B or I, W actions an iteration
  RankActionTimes measured, simulated;
};

struct ActionComparison {
  std::string point, system, schedule;
  size_t measured_iterations = 0;  // the fewest of any rank, pooled over repeats
  size_t simulations = 0;
  std::vector<RankActions> ranks;  // by rank

  // Simulated less measured, per part and for the iteration, mean over ranks.
  RankActionTimes miss() const;
  double measured_iteration_ms() const;  // mean over ranks
  double simulated_iteration_ms() const;
};

// Every pipeline system of the results folder `measured` (`harness run`) that has a simulated
// run of the same point id and system name in each of `simulated` (`harness simulate` results
// folders with traces), `system` naming one or "" for every one. InputError (one line naming the
// file or folder) for a folder that is not a results folder, no pipeline run, a system without
// its simulation or a trace of each rank, or a malformed file.
std::vector<ActionComparison> compare_actions(const std::filesystem::path& measured,
                                              const std::vector<std::filesystem::path>& simulated,
                                              const std::string& system);

// A section per system: a row per rank (per action for F, B and W, per iteration for the rest;
// each cell measured / simulated) and the miss line.
std::string actions_markdown(const std::vector<ActionComparison>& comparisons);
nlohmann::json actions_json(const std::vector<ActionComparison>& comparisons);

}  // namespace harness
