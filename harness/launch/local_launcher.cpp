#include "harness/launch/local_launcher.h"

#include "common/child_process.h"
#include "harness/launch/stall_check.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

namespace harness {

namespace fs = std::filesystem;

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
void on_stop_signal(int) { stop_requested().store(true); }

// Counts heartbeat lines as a rank's stdout grows, reading only what is new.
class HeartbeatReader {
 public:
  explicit HeartbeatReader(fs::path path) : path_(std::move(path)) {}
  // Returns true when new lines arrived since the last call.
  bool poll() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return false;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size <= offset_) return false;
    in.seekg(offset_);
    std::string chunk(static_cast<size_t>(size - offset_), '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    offset_ = size;
    long long before = lines_;
    for (char c : chunk) lines_ += c == '\n';
    return lines_ != before;
  }
  long long lines() const { return lines_; }

 private:
  fs::path path_;
  std::streamoff offset_ = 0;
  long long lines_ = 0;
};

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string tail_lines(const fs::path& path, size_t lines) {
  std::ifstream in(path);
  if (!in) return "";
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& line : last) out += line + "\n";
  return out;
}

std::string rank_host_from_stdout(const fs::path& stdout_path) {
  std::ifstream in(stdout_path);
  std::string line;
  for (int i = 0; i < 20 && std::getline(in, line); ++i) {
    if (line.rfind("rank identity: ", 0) != 0) continue;
    const auto at = line.find(" host=");
    if (at == std::string::npos) return "";
    const auto end = line.find(' ', at + 6);
    return line.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
  }
  return "";
}

bool lost_a_peer(const std::string& stderr_tail) {
  return stderr_tail.find("Connection reset by peer") != std::string::npos ||
         stderr_tail.find("Connection closed by peer") != std::string::npos;
}

bool failed_on_busy_port(const std::string& stderr_tail) {
  return stderr_tail.find("Address already in use") != std::string::npos ||
         stderr_tail.find("errno: 98") != std::string::npos;
}

namespace {

// One rank's process, its output to its files, its environment the harness's plus its own; it
// dies with the harness. A program that cannot be started ends the rank with code 127 and the
// reason in its stderr file.
ChildProcess start_rank(const std::string& executable, const RankProcess& rank) {
  // A prefix (e.g. numactl, taskset) is looked up on PATH as a shell would; the rank program
  // is run as named.
  std::vector<std::string> words = rank.prefix;
  words.push_back(executable);
  words.insert(words.end(), rank.arguments.begin(), rank.arguments.end());
  ChildSpec spec;
  spec.program = words.front();
  spec.args.assign(words.begin() + 1, words.end());
  spec.environment = rank.environment;
  spec.out = ChildStream::to_file(rank.stdout_path);
  spec.err = ChildStream::to_file(rank.stderr_path);
  return ChildProcess(spec);
}

struct RankChild {
  ChildProcess process;
  std::optional<ChildExit> exit;  // once it has ended
};

// Reaps every rank that ended since the last poll and returns the failure to report, (rank,
// how it ended): when several died in the same poll, one killed by a signal is the likely
// cause; the others were failing collectives.
std::optional<std::pair<int, ChildExit>> reap_exited(std::vector<RankChild>& children) {
  std::optional<std::pair<int, ChildExit>> first_failure;
  for (size_t r = 0; r < children.size(); ++r) {
    RankChild& child = children[r];
    if (child.exit) continue;
    child.exit = child.process.poll();
    if (!child.exit || child.exit->succeeded()) continue;
    if (!first_failure || (child.exit->signal != 0 && first_failure->second.signal == 0)) {
      first_failure = std::make_pair(static_cast<int>(r), *child.exit);
    }
  }
  return first_failure;
}

}  // namespace

LaunchOutcome launch_local(const std::string& executable, const std::vector<RankProcess>& ranks,
                           const LaunchLimits& limits, const ProgressCallback& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };

  std::vector<RankChild> children;
  std::vector<HeartbeatReader> heartbeats;
  std::vector<Clock::time_point> last_progress(ranks.size(), start);
  auto stop_all = [&]() {
    for (RankChild& child : children) {
      if (!child.exit) child.exit = child.process.kill();  // reaped: no zombie left behind
    }
  };
  try {
    for (const auto& rank : ranks) {
      children.push_back({start_rank(executable, rank), std::nullopt});
      heartbeats.emplace_back(rank.stdout_path);
    }
  } catch (...) {
    stop_all();  // the ranks already started
    throw;
  }

  LaunchOutcome outcome;
  auto interrupted = [&]() {
    stop_all();
    outcome.interrupted = true;
    outcome.elapsed_s = seconds_since(start);
    return outcome;
  };
  auto fail = [&](int rank, std::string reason) {
    stop_all();
    outcome.failure = RankFailure{rank, std::move(reason), tail_lines(ranks[rank].stderr_path, 20)};
    outcome.elapsed_s = seconds_since(start);
    return outcome;
  };

  while (true) {
    const std::optional<std::pair<int, ChildExit>> first_failure = reap_exited(children);
    if (first_failure) {
      // Ctrl-C in a terminal reaches the ranks (same process group) as well as the harness: a
      // rank that died of SIGINT/SIGTERM while the harness was asked to stop is no failure.
      const int signal = first_failure->second.signal;
      if (signal == SIGINT || signal == SIGTERM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      if (stop_requested().load()) return interrupted();
      return fail(first_failure->first, first_failure->second.describe());
    }
    if (std::all_of(children.begin(), children.end(),
                    [](const RankChild& child) { return child.exit.has_value(); })) {
      break;
    }

    for (size_t r = 0; r < heartbeats.size(); ++r) {
      if (heartbeats[r].poll()) last_progress[r] = Clock::now();
    }
    if (progress) progress(heartbeats[0].lines());

    if (stop_requested().load()) return interrupted();
    std::vector<RankProgress> progress_of(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
      progress_of[r] = {heartbeats[r].lines(), last_progress[r], !children[r].exit};
    }
    if (auto failure = stall_or_timeout(progress_of, limits, start)) {
      return fail(failure->rank, failure->reason);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(limits.poll_interval_s));
  }
  outcome.ok = true;
  outcome.elapsed_s = seconds_since(start);
  return outcome;
}

}  // namespace harness
