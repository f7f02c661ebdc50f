// Launches the ranks of one run as local processes (fork and exec) and watches them: a rank
// that exits non-zero or dies by a signal, or stops making progress, ends the run; the other
// ranks are killed and the failure names the rank, why, and the tail of its stderr.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness {

struct RankProcess {
  std::vector<std::string> arguments;              // after the executable
  std::map<std::string, std::string> environment;  // added to the harness's own
  std::filesystem::path stdout_path;               // heartbeat lines are read from here
  std::filesystem::path stderr_path;
  // Run as `prefix... executable arguments` (e.g. `ip netns exec NS`: a rank of an emulated
  // machine); empty: the executable itself. The prefix must exec the executable in its place.
  std::vector<std::string> prefix;
};

struct LaunchLimits {
  double timeout_s = 3600;       // the whole run
  double stall_timeout_s = 300;  // no rank wrote a heartbeat for this long
  double poll_interval_s = 0.05;
};

struct RankFailure {
  int rank = -1;
  std::string reason;       // "exited with code 1", "killed by signal 6 (Aborted)", "hung: ..."
  std::string stderr_tail;  // last lines of that rank's stderr
  std::string host = {};    // where that rank ran, when known
};

struct LaunchOutcome {
  bool ok = false;
  bool interrupted = false;  // the harness itself was asked to stop (SIGINT/SIGTERM)
  std::optional<RankFailure> failure;
  double elapsed_s = 0;
};

// Called on every poll with the heartbeat count of rank 0 (lines its stdout holds).
using ProgressCallback = std::function<void(long long heartbeats)>;

LaunchOutcome launch_local(const std::string& executable, const std::vector<RankProcess>& ranks,
                           const LaunchLimits& limits, const ProgressCallback& progress = {});

// Set by the harness's SIGINT/SIGTERM handler; launch_local stops its ranks when it is true.
std::atomic<bool>& stop_requested();
void install_stop_signal_handlers();

// The last `lines` lines of a text file ("" when it cannot be read).
std::string tail_lines(const std::filesystem::path& path, size_t lines);

// The host a rank named in its "rank identity: ... host=NAME ..." line (rank/worker.cpp),
// "" when its stdout has none.
std::string rank_host_from_stdout(const std::filesystem::path& stdout_path);

// Whether a failed rank's stderr says it failed because a peer went away (Gloo's "Connection
// reset by peer" / "Connection closed by peer"): a consequence of another rank's end, not a
// cause.
bool lost_a_peer(const std::string& stderr_tail);

// Whether a failed rank's stderr says its rendezvous port was taken (c10d's TCPStore: "errno:
// 98 - Address already in use"): the run is then retried on another port.
bool failed_on_busy_port(const std::string& stderr_tail);

}  // namespace harness
