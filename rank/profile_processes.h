// The processes a profile starts beside the measured one (co-located copies in lockstep, a
// stage profile's other stages), watched while they run.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/child_process.h"

namespace harness {

// The other processes of a co-located or stage profile: started before the measurement,
// watched during it, reaped after it (killed if still running: the measured process is done
// with them). One that fails while they run ends the whole profile at once: the measured
// process may then be blocked in a barrier wait that the dead process would have opened, and
// c10d's store wait cannot be interrupted, so the watcher reports the process, kills the
// others, runs `cleanup` and exits with status 1 itself (nothing is written before the end).
class ProfileProcesses {
 public:
  // `names[i]`: how a failure message names the process started with `args[i]`.
  ProfileProcesses(const std::string& executable, const std::vector<std::vector<std::string>>& args,
                   std::vector<std::string> names, std::function<void()> cleanup = {});
  ~ProfileProcesses();
  ProfileProcesses(const ProfileProcesses&) = delete;
  ProfileProcesses& operator=(const ProfileProcesses&) = delete;

  // Waits up to `timeout_s` for every process to exit (a failure ends the profile first).
  void wait_all(double timeout_s);

 private:
  struct Process {
    ChildProcess child;
    std::optional<ChildExit> exit;  // once it has ended
  };

  // The only reaper of the processes while they run.
  void watch();
  void kill_all();
  [[noreturn]] void fail(const std::string& why);
  std::string name(size_t i) const;

  std::vector<std::string> names_;
  std::function<void()> cleanup_;
  std::mutex mutex_;
  std::vector<Process> processes_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace harness
