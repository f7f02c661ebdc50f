#include "harness/launch/supervised_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "common/captured_process.h"
#include "common/parent_death.h"
#include "harness/launch/local_launcher.h"

namespace harness {

namespace {

// The child's status once it has ended; -1 while it runs.
int poll_exit(pid_t pid) {
  int status = 0;
  const pid_t done = ::waitpid(pid, &status, WNOHANG);
  if (done == pid) return exit_code_of_status(status);
  if (done < 0 && errno != EINTR) return 1;
  return -1;
}

// SIGTERM, then SIGKILL once `grace_s` has passed: the child harness stops its ranks on SIGTERM.
int stop_child(pid_t pid, double grace_s) {
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (const int code = poll_exit(pid); code >= 0) return code;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return exit_code_of_status(status);
}

}  // namespace

SupervisedExit run_supervised(const std::string& program, const std::vector<std::string>& args,
                              const std::filesystem::path& log,
                              const std::map<std::string, std::string>& environment,
                              double grace_s) {
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw std::runtime_error("cannot write " + log.string() + ": " + std::strerror(errno));
  }
  std::vector<std::string> words{program};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv = exec_argv(words);
  // Made before the fork: after it, only async-signal-safe calls.
  const std::vector<std::string> entries = environment_with(environment);
  std::vector<char*> envp = exec_argv(entries);
  const pid_t pid = fork_dying_with_parent();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) exec_child(argv.data(), envp.data(), log_fd, log_fd, ProgramLookup::kAsNamed);
  ::close(log_fd);
  while (true) {
    if (const int code = poll_exit(pid); code >= 0) return {code, false};
    if (stop_requested().load()) return {stop_child(pid, grace_s), true};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace harness
