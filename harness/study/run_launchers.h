// How one run's ranks are started and watched, behind one interface, so that the study runner
// never asks which launcher it holds: the harness's rank program as local processes or under
// a cluster launcher (mpirun, srun; torchrun prints its per-host commands), or an external
// system's own program (started locally whatever --launcher says).
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "harness/emulation/network_plan.h"
#include "harness/launch/launch_plan.h"
#include "harness/launch/local_launcher.h"
#include "harness/study/planned_run.h"

namespace harness {

// One attempt at one run: where its files go and the rendezvous port its ranks meet on.
struct RunAttempt {
  const PlannedRun& run;
  std::filesystem::path raw;
  int port = 0;
  // The emulated machines the ranks run on (cluster.machines > 1), built for the run; null:
  // this host's loopback.
  const NetworkPlan* network = nullptr;
  // The attempt's own key space in the rendezvous store (runtime::Rendezvous::key).
  std::string rendezvous_key;
};

class RunLauncher {
 public:
  virtual ~RunLauncher() = default;
  // Who starts the ranks, as status.json and failure reports name it.
  virtual LauncherKind kind() const = 0;
  // Whether the run's ranks meet on a TCP port (otherwise a file store: port 0).
  virtual bool needs_port(const PlannedRun& run) const = 0;
  // Writes the run's config.json, starts its ranks and watches them until they end.
  virtual LaunchOutcome launch(const RunAttempt& attempt, const LaunchLimits& limits,
                               const ProgressCallback& progress) = 0;
  // After every rank exited 0: what still makes the run incomplete (samples missing or
  // unreadable); details go into the run's status.
  virtual std::optional<RankFailure> collect(const RunAttempt& attempt, nlohmann::json& status) = 0;
  // --print-launch: the commands that would start the ranks, one line each.
  virtual void print(const RunAttempt& attempt, std::ostream& out) const = 0;
  // Whether rank 0 failing on a port in use is worth another attempt on another port.
  virtual bool retries_busy_port() const { return true; }
};

// The launcher of `run` under these options.
std::unique_ptr<RunLauncher> make_run_launcher(const PlannedRun& run, const RunnerOptions& options);

// Throws InputError when the launcher of the options cannot start ranks from here: torchrun
// (started on every host by the user) or a cluster launcher not on PATH.
void check_launcher_usable(const RunnerOptions& options);

}  // namespace harness
