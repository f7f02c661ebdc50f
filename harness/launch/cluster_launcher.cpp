#include "harness/launch/cluster_launcher.h"

#include "harness/launch/stall_check.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/text_pattern.h"
#include "runtime/protocol/result_frames.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

void append_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

std::string signal_text(int signal) {
  return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

// Reads what a growing file gained since the last call.
class FileFollower {
 public:
  explicit FileFollower(fs::path path) : path_(std::move(path)) {}
  std::string read_new() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return "";
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size <= offset_) return "";
    in.seekg(offset_);
    std::string chunk(static_cast<size_t>(size - offset_), '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    offset_ = size;
    return chunk;
  }

 private:
  fs::path path_;
  std::streamoff offset_ = 0;
};

}  // namespace

RankOutputSplitter::RankOutputSplitter(LauncherKind kind, int world_size, fs::path directory,
                                       std::string stream, int first_rank)
    : kind_(kind),
      directory_(std::move(directory)),
      stream_(std::move(stream)),
      lines_(static_cast<size_t>(world_size), 0),
      first_rank_(first_rank) {
  // The first launcher's splitter starts every rank's file (another agent's must not empty
  // what the first already wrote).
  if (first_rank != 0) return;
  for (int r = 0; r < world_size; ++r) {
    std::ofstream(directory_ / ("rank" + std::to_string(r) + "." + stream_), std::ios::trunc);
  }
}

void RankOutputSplitter::emit(int rank, const std::string& stream, const std::string& text) {
  if (rank < 0 || rank >= static_cast<int>(lines_.size())) {
    own_ += text;
    return;
  }
  append_file(directory_ / ("rank" + std::to_string(rank) + "." + stream), text);
  if (stream == stream_) {
    for (char c : text) lines_[rank] += c == '\n';
  }
}

void RankOutputSplitter::feed(const std::string& bytes) {
  pending_ += bytes;
  // Only whole lines: a tag or prefix cut by the end of a read is completed by the next one.
  const auto last = pending_.rfind('\n');
  if (last == std::string::npos) return;
  const std::string text = pending_.substr(0, last + 1);
  pending_.erase(0, last + 1);
  if (kind_ == LauncherKind::mpirun) {
    split_tagged(text);
    return;
  }
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    split_prefixed_line(text.substr(start, end + 1 - start));
    start = end + 1;
  }
}

void RankOutputSplitter::finish() {
  if (pending_.empty()) return;
  const std::string rest = pending_ + "\n";
  pending_.clear();
  feed(rest);
}

// Open MPI's --tag-output puts "[job,rank]<stream>:" before every chunk it forwards and after
// every newline inside one. So text after a tag belongs to that rank up to the end of its line
// or the next tag (a line cut between two chunks continues after a later tag of the same
// rank); text after a newline with no tag is mpirun's own.
void RankOutputSplitter::split_tagged(const std::string& text) {
  static const TextPattern tag(R"(\[[0-9]+,([0-9]+)\]<(stdout|stderr|stddiag)>:)");
  size_t pos = 0;
  int rank = -1;
  std::string stream;
  while (pos < text.size()) {
    const std::optional<PatternMatch> match = tag.search(std::string_view(text).substr(pos));
    const size_t tag_at = match ? pos + match->position() : text.size();
    if (match && tag_at == pos) {
      rank = std::stoi(match->group(1));
      stream = match->group(2) == "stdout" ? "stdout" : "stderr";
      pos += match->length();
      continue;
    }
    const size_t newline = text.find('\n', pos);
    const size_t end = std::min(tag_at, newline == std::string::npos ? text.size() : newline + 1);
    emit(rank, stream, text.substr(pos, end - pos));
    if (end == newline + 1) rank = -1;
    pos = end;
  }
}

// Slurm's --label: "  3: text"; torchrun's --tee: "[default1]:text" (role and local rank).
void RankOutputSplitter::split_prefixed_line(const std::string& line) {
  static const TextPattern label(R"(^ *([0-9]+): )");
  static const TextPattern tee(R"(^\[[A-Za-z_]*([0-9]+)\]:)");
  const std::optional<PatternMatch> match =
      (kind_ == LauncherKind::torchrun ? tee : label).search(line);
  if (match) {
    emit(first_rank_ + std::stoi(match->group(1)), stream_, line.substr(match->length()));
  } else {
    emit(-1, stream_, line);
  }
}

RankFailure parse_launcher_failure(LauncherKind kind, const std::string& text,
                                   const ChildExit& launcher_exit) {
  RankFailure failure;
  if (kind == LauncherKind::mpirun) {
    static const TextPattern signaled(
        R"(process rank ([0-9]+) with PID [0-9]+ on node (\S+) exited on signal ([0-9]+))");
    static const TextPattern exited(
        R"(Process name: \[\[[0-9]+,[0-9]+\],([0-9]+)\]\s*\n\s*Exit code:\s*([0-9]+))");
    if (const std::optional<PatternMatch> match = signaled.search(text)) {
      failure.rank = std::stoi(match->group(1));
      failure.host = match->group(2);
      failure.reason = signal_text(std::stoi(match->group(3)));
      return failure;
    }
    if (const std::optional<PatternMatch> match = exited.search(text)) {
      failure.rank = std::stoi(match->group(1));
      failure.reason = "exited with code " + match->group(2);
      return failure;
    }
  } else if (kind == LauncherKind::slurm) {
    // A node that failed (or was set down) is the cause; its tasks' and the others' ends are
    // what followed from it.
    static const TextPattern node(R"(srun: error: Node failure on (\S+))");
    if (const std::optional<PatternMatch> match = node.search(text)) {
      failure.host = match->group(1);
      failure.reason = "its node " + failure.host + " failed (srun: Node failure)";
      return failure;
    }
    static const TextPattern task(R"(srun: error: (\S+): tasks? ([0-9]+)[^:]*: ([^\n]*))");
    static const TextPattern code(R"(Exited with exit code ([0-9]+))");
    if (const std::optional<PatternMatch> match = task.search(text)) {
      failure.rank = std::stoi(match->group(2));
      failure.host = match->group(1);
      const std::string what = match->group(3);
      const std::optional<PatternMatch> exit_code = code.search(what);
      failure.reason = exit_code ? "exited with code " + exit_code->group(1) : "srun: " + what;
      return failure;
    }
  } else if (kind == LauncherKind::torchrun) {
    // The agent's ChildFailedError report: "Root Cause (first observed failure):", then the
    // rank, its host and its exit code (negative: the signal that ended it).
    static const TextPattern root(
        R"(Root Cause[^\n]*\n(?:.*\n)*?\s*host\s*:\s*(\S+)\s*\n\s*rank\s*:\s*([0-9]+)[^\n]*\n\s*exitcode\s*:\s*(-?[0-9]+))");
    if (const std::optional<PatternMatch> match = root.search(text)) {
      failure.host = match->group(1);
      failure.rank = std::stoi(match->group(2));
      const int code = std::stoi(match->group(3));
      failure.reason = code < 0 ? signal_text(-code) : "exited with code " + std::to_string(code);
      return failure;
    }
  }
  failure.reason = launcher_name(kind) + " " + launcher_exit.describe();
  return failure;
}

namespace {

// Starts the cluster launcher in a process group of its own (so that stopping the run reaches
// every process it started here), its output into the two files.
ChildProcess start_launcher_group(const std::vector<std::string>& words, const fs::path& out_path,
                                  const fs::path& err_path) {
  ChildSpec spec;
  spec.program = words.front();
  spec.args.assign(words.begin() + 1, words.end());
  spec.out = ChildStream::to_file(out_path);
  spec.err = ChildStream::to_file(err_path);
  spec.own_process_group = true;
  return ChildProcess(spec);
}

// The result files rank 0 framed into its stdout, written into the run's folder.
std::optional<RankFailure> unpack_result_frames(const fs::path& directory) {
  const auto frames = runtime::decode_frames(read_file(directory / "rank0.stdout"));
  if (!frames.errors.empty()) {
    return RankFailure{0, "its result files did not arrive intact: " + frames.errors.front(), ""};
  }
  for (const auto& [name, content] : frames.files) write_file_atomic(directory / name, content);
  return std::nullopt;
}

}  // namespace

namespace {

// One launcher process of a launch: its process group, its output files as they grow, and the
// splitters that hand its lines to the ranks they belong to.
struct LauncherProcess {
  std::optional<ChildProcess> process;
  std::optional<ChildExit> exit;  // once it has ended
  bool ended_itself = false;      // exited before the harness stopped it
  fs::path err_path;
  std::unique_ptr<FileFollower> out_follow, err_follow;
  std::unique_ptr<RankOutputSplitter> out_split, err_split;

  void pump() {
    out_split->feed(out_follow->read_new());
    err_split->feed(err_follow->read_new());
  }
  void finish() {
    pump();
    out_split->finish();
    err_split->finish();
  }
  bool failed() const { return exit && !exit->succeeded(); }
  // Whether it has just ended on its own; then nothing it started outlives it.
  bool reap() {
    if (exit || !(exit = process->poll())) return false;
    ended_itself = true;
    process->kill();  // its group: what it left behind
    return true;
  }
  // SIGTERM to its group, 5 s for the launcher to end, then SIGKILL for whatever is left (a
  // rank that ignores SIGTERM, or outlived its launcher).
  void stop() {
    if (!exit) exit = process->stop(5);
  }
};

// Every launcher of `launch` started, their rank files begun.
std::vector<LauncherProcess> start_launchers(const ClusterLaunch& launch) {
  const int agents = static_cast<int>(launch.commands.size());
  const int ranks_each = launch.world_size / std::max(1, agents);
  std::vector<LauncherProcess> processes(launch.commands.size());
  for (int k = 0; k < agents; ++k) {
    const std::string suffix = k == 0 ? "" : std::to_string(k);
    const fs::path out_path = launch.directory / ("launcher" + suffix + ".stdout");
    LauncherProcess& process = processes[k];
    process.err_path = launch.directory / ("launcher" + suffix + ".stderr");
    process.out_split = std::make_unique<RankOutputSplitter>(
        launch.kind, launch.world_size, launch.directory, "stdout", k * ranks_each);
    process.err_split = std::make_unique<RankOutputSplitter>(
        launch.kind, launch.world_size, launch.directory, "stderr", k * ranks_each);
    process.process = start_launcher_group(launch.commands[k].argv, out_path, process.err_path);
    process.out_follow = std::make_unique<FileFollower>(out_path);
    process.err_follow = std::make_unique<FileFollower>(process.err_path);
  }
  return processes;
}

// Waits up to `grace` for the launchers still running to end on their own.
void let_the_others_end(std::vector<LauncherProcess>& processes,
                        std::chrono::steady_clock::duration grace) {
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    bool running = false;
    for (auto& p : processes) {
      p.reap();
      running = running || !p.exit;
    }
    if (!running) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The failure that caused the others, as the launchers that failed on their own report it (not
// those the harness stopped): the first whose rank did not merely lose a peer (one agent's rank
// dying resets the Gloo connections of every other agent's ranks), else the first. Returns it
// with the stderr of the launcher that said so.
std::pair<RankFailure, fs::path> first_cause(const ClusterLaunch& launch,
                                             const std::vector<LauncherProcess>& processes) {
  std::optional<std::pair<RankFailure, fs::path>> chosen;
  bool chosen_lost_a_peer = false;
  for (const auto& p : processes) {
    if (!p.failed() || !p.ended_itself) continue;
    const RankFailure failure = parse_launcher_failure(
        launch.kind, p.out_split->own_text() + p.err_split->own_text(), *p.exit);
    const bool lost =
        failure.rank >= 0 &&
        lost_a_peer(
            tail_lines(launch.directory / ("rank" + std::to_string(failure.rank) + ".stderr"), 20));
    if (!chosen || (chosen_lost_a_peer && !lost)) {
      chosen = {failure, p.err_path};
      chosen_lost_a_peer = lost;
    }
  }
  return *chosen;
}

}  // namespace

LaunchOutcome launch_cluster(const ClusterLaunch& launch, const LaunchLimits& limits,
                             const ProgressCallback& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  fs::create_directories(launch.directory);
  std::vector<LauncherProcess> processes = start_launchers(launch);
  std::vector<long long> seen(static_cast<size_t>(launch.world_size), 0);
  std::vector<Clock::time_point> last_progress(seen.size(), start);
  auto stop_all = [&]() {
    for (auto& p : processes) p.stop();
  };
  auto finish_outputs = [&]() {
    for (auto& p : processes) p.finish();
  };

  LaunchOutcome outcome;
  auto fail = [&](RankFailure failure, const fs::path& launcher_err) {
    stop_all();
    finish_outputs();
    if (failure.rank >= 0) {
      failure.stderr_tail =
          tail_lines(launch.directory / ("rank" + std::to_string(failure.rank) + ".stderr"), 20);
    }
    if (failure.stderr_tail.empty()) failure.stderr_tail = tail_lines(launcher_err, 20);
    outcome.failure = failure;
    outcome.elapsed_s = seconds_since(start);
    return outcome;
  };

  while (true) {
    const LauncherProcess* failed = nullptr;
    size_t ended = 0;
    for (auto& p : processes) {
      p.reap();
      ended += p.exit.has_value();
      if (!failed && p.failed()) failed = &p;
    }
    if (failed) {
      // Several agents (torchrun's): the others' ranks lose their peers and their agents end
      // too, within a monitor tick; each reports its own ranks, the cause among them.
      if (processes.size() > 1) let_the_others_end(processes, std::chrono::seconds(1));
      stop_all();
      finish_outputs();
      outcome.elapsed_s = seconds_since(start);
      // Ctrl-C in a terminal reaches the launcher too, which then ends on its own.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (stop_requested().load()) {
        outcome.interrupted = true;
        return outcome;
      }
      const auto [failure, err_path] = first_cause(launch, processes);
      return fail(failure, err_path);
    }
    if (ended == processes.size()) {
      finish_outputs();
      break;
    }
    for (auto& p : processes) p.pump();
    for (size_t r = 0; r < seen.size(); ++r) {
      long long lines = 0;
      for (const auto& p : processes) lines += p.out_split->lines(static_cast<int>(r));
      if (lines != seen[r]) {
        seen[r] = lines;
        last_progress[r] = Clock::now();
      }
    }
    if (progress) progress(seen[0]);
    if (stop_requested().load()) {
      stop_all();
      finish_outputs();
      outcome.interrupted = true;
      outcome.elapsed_s = seconds_since(start);
      return outcome;
    }
    std::vector<RankProgress> progress_of(seen.size());
    for (size_t r = 0; r < seen.size(); ++r) progress_of[r] = {seen[r], last_progress[r], true};
    if (auto failure = stall_or_timeout(progress_of, limits, start)) {
      return fail(*failure, processes.front().err_path);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(limits.poll_interval_s));
  }
  outcome.elapsed_s = seconds_since(start);
  if (auto failure = unpack_result_frames(launch.directory)) {
    return fail(*failure, processes.front().err_path);
  }
  outcome.ok = true;
  return outcome;
}

}  // namespace harness
