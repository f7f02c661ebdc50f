#include "planner/report/explain.h"

#include <cmath>

#include "planner/report/plan_report.h"

namespace harness::planner {
namespace {

bool differs(double a, double b) { return std::fabs(a - b) > 5e-5 * std::max(1.0, std::fabs(a)); }

}  // namespace

void write_mode_differences(std::ostream& out, const ModelProfile& profile,
                            const PlannerOptions& options, const std::vector<int>& batches) {
  PlannerOptions compat = options, dapple = options;
  compat.mode = PlannerMode::kCompat;
  dapple.mode = PlannerMode::kDapple;
  const CostModel compat_cost = make_cost_model(compat), dapple_cost = make_cost_model(dapple);
  const int n = options.devices.num_gpus();

  out << "Rules that differ (compat = published planner, dapple = corrected):\n";
  std::string skipped;
  for (int units = 2; units <= n; ++units) {
    if (n % units != 0) skipped += (skipped.empty() ? "" : ",") + std::to_string(units);
  }
  out << "  - unit counts not dividing " << n << " GPUs: "
      << (skipped.empty()
              ? "none"
              : "compat keeps only the single stage of all states on units x (n/units) GPUs "
                "for " +
                    skipped +
                    " (the published search's first cells: its later stages find no "
                    "placement); dapple searches every split on them")
      << '\n';
  out << "  - P3 overlap: compat takes the next block's compute by layer index (index quirk) and "
         "treats antichain states as layers; dapple uses block order and the profile's layers\n";
  out << "  - stage all-reduce: compat charges a non-last stage the parameters of the next "
         "stage's first state (off by one); dapple charges its own states\n";
  out << "  - memory: compat never checks; dapple requires parameters x "
      << options.setup.optimizer_memory_scaling
      << " + in-flight micro-batch activations <= " << dapple_cost.topology().gpu_memory_bytes
      << " B per GPU\n";
  out << "  - bandwidths/memory: compat uses the published constants; dapple uses topology '"
      << dapple_cost.topology().name << "'\n";
  out << "  - all-reduce across machines: compat uses one flat ring; dapple uses the cheaper of "
         "flat and hierarchical\n";
  out << "  - bipartition cut: compat transfers 1x the cut activation, dapple 2x (forward "
         "activation and backward gradient), as the search does\n";
  out << "  - ties: both modes keep the first candidate (the published planner follows hash "
         "order)\n";
  out << "Rules both modes share with the published planner:\n";
  out << "  - states: numbered as PipeDream's topological sort (depth first by the antichain's "
         "first node, reverse postorder); where the model branches, a state's own totals "
         "follow that order, and compat's P3 reads them state by state\n";

  const SweepResult a = plan_sweep(profile, compat, batches);
  const SweepResult b = plan_sweep(profile, dapple, batches);
  out << "\nDifferences per batch size (compat -> dapple):\n";
  int shown = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const BatchPlan& x = a.batches[i];
    const BatchPlan& y = b.batches[i];
    std::string line;
    auto column = [&](const char* name, double u, double v) {
      if (differs(u, v)) {
        line += std::string(line.empty() ? "" : "; ") + name + " " + format_speedup(u) + " -> " +
                format_speedup(v);
      }
    };
    column("dp_no_overlap", x.data_parallel.no_overlap, y.data_parallel.no_overlap);
    column("dp_p3", x.data_parallel.p3, y.data_parallel.p3);
    column("dp_overlap", x.data_parallel.overlap, y.data_parallel.overlap);
    column("best_hybrid", x.best_hybrid, y.best_hybrid);
    const std::string px = x.plan ? describe_stages(*x.plan) : "-";
    const std::string py = y.plan ? describe_stages(*y.plan) : "-";
    if (px != py) line += std::string(line.empty() ? "" : "; ") + "plan " + px + " -> " + py;
    if (x.timing.fits_memory == false && x.plan) {
      line += std::string(line.empty() ? "" : "; ") + "compat plan needs more memory than " +
              "the GPU has";
    }
    if (y.candidates_over_memory > 0) {
      line += std::string(line.empty() ? "" : "; ") + std::to_string(y.candidates_over_memory) +
              " dapple candidates over memory";
    }
    if (line.empty()) continue;
    out << "  gbs " << batches[i] << ": " << line << '\n';
    ++shown;
  }
  if (shown == 0) out << "  none\n";
}

}  // namespace harness::planner
