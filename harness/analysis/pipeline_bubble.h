// A pipeline run's bubble two ways, from its ranks' pipeline_rank<r>.json:
//  measured - per iteration, each rank's share of the pipeline's span that it spent not
//             computing (forward, B, I, W), the span running from the first compute on any rank
//             (its input in hand) to the last compute on any rank, on the ranks' shared clock
//             (ranks of one host); waiting on receives and posting sends count as idle, the
//             all-reduce and the step after the span do not. Mean over ranks and iterations.
//  schedule - the schedule's own figure: its action lists run at F = I = W = 1 (B = 2) with
//             free links (runtime::time_schedule): (p-1)/(m+p-1) for GPipe and 1F1B,
//             (p-1)/(v m+p-1) interleaved, (p-1)/(3m+p-1) ZB-H1.
//  costed   - the same lists at the run's own compute times: each rank's mean F, I and W per
//             action, measured (a B-only rank's I and W half of its B; its stages alike), free
//             links; what is left between it and the measured one is communication and
//             overhead, the schedule's part being the costed figure.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace harness {

// Ranks of one run, in rank order. Nothing when a rank lacks the clock fields (older results)
// or the span is not one clock's (ranks on several hosts).
std::optional<double> measured_pipeline_bubble(const std::vector<nlohmann::json>& ranks);

// From the ranks' schedule_order and stages_here; nothing when they are missing or unreadable.
std::optional<double> schedule_bubble(const std::vector<nlohmann::json>& ranks);
std::optional<double> costed_schedule_bubble(const std::vector<nlohmann::json>& ranks);

}  // namespace harness
