// Runs one run's ranks under a cluster launcher (mpirun, srun) started as a single process
// here, and watches it as launch_local watches its ranks: the launcher's merged output is
// split back into per-rank rank<r>.stdout / rank<r>.stderr (Open MPI's --tag-output, Slurm's
// --label prefixes), heartbeats are counted per rank,
// and a rank that dies, hangs or runs past the timeout ends the run with a report parsed from
// the launcher's own message (rank, host, signal or exit code). Result files arrive framed in
// rank 0's stdout (runtime/protocol/result_frames.h) and are written into the run's folder.
#pragma once

#include "common/child_process.h"

#include <filesystem>
#include <string>
#include <vector>

#include "harness/launch/launch_plan.h"
#include "harness/launch/local_launcher.h"

namespace harness {

// Splits a launcher's merged output stream into per-rank streams. Feed it the bytes in the
// order they were written; it writes <directory>/rank<r>.<stream> and counts lines per rank.
class RankOutputSplitter {
 public:
  // `stream` is "stdout" or "stderr": the stream of the launcher being split. `first_rank`:
  // torchrun's agent labels its ranks by local rank ("[default1]:"), counted from its node's
  // first rank.
  RankOutputSplitter(LauncherKind kind, int world_size, std::filesystem::path directory,
                     std::string stream, int first_rank = 0);
  void feed(const std::string& bytes);
  void finish();  // flushes a last line without newline
  long long lines(int rank) const { return lines_.at(rank); }
  // What the launcher printed itself (not attributed to a rank).
  const std::string& own_text() const { return own_; }

 private:
  void split_tagged(const std::string& text);         // Open MPI
  void split_prefixed_line(const std::string& line);  // Slurm, torchrun
  void emit(int rank, const std::string& stream, const std::string& text);

  LauncherKind kind_;
  std::filesystem::path directory_;
  std::string stream_;
  std::string pending_;
  std::string own_;
  std::vector<long long> lines_;
  int first_rank_ = 0;
};

// The failure a launcher reported in its own output (`launcher_text`: its stdout and stderr
// not attributed to ranks), given how the launcher ended; rank -1 when it names none.
RankFailure parse_launcher_failure(LauncherKind kind, const std::string& launcher_text,
                                   const ChildExit& launcher_exit);

struct ClusterLaunch {
  // Whose output and messages these are (mpirun's tags, srun's labels, torchrun's prefixes):
  // said, never guessed from the command, which may start with a wrapper (`harness
  // enter-machine ... mpirun`).
  LauncherKind kind = LauncherKind::mpirun;
  // One launcher process each: mpirun and srun one; torchrun one agent per machine, each
  // holding world_size / commands.size() ranks, the first agent rank 0. Their output goes to
  // launcher.stdout / .stderr (the first) and launcher<k>.stdout / .stderr.
  std::vector<LaunchCommand> commands;
  int world_size = 1;
  std::filesystem::path directory;  // the run's raw folder
};

// Starts each launcher process in a process group of its own and watches them; on a failure
// (a launcher ending other than with 0), stall, timeout or Ctrl-C every group is stopped
// (SIGTERM, then SIGKILL after a grace period). When all ended with 0 the result files framed
// in rank 0's stdout are written into `directory`; a damaged or missing frame is a failure of
// rank 0.
LaunchOutcome launch_cluster(const ClusterLaunch& launch, const LaunchLimits& limits,
                             const ProgressCallback& progress = {});

}  // namespace harness
