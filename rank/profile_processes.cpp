#include "rank/profile_processes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace harness {

ProfileProcesses::ProfileProcesses(const std::string& executable,
                                   const std::vector<std::vector<std::string>>& args,
                                   std::vector<std::string> names, std::function<void()> cleanup)
    : names_(std::move(names)), cleanup_(std::move(cleanup)) {
  for (const auto& process_args : args) {
    ChildSpec spec;
    spec.program = executable;
    spec.args = process_args;
    spec.inherit_stdin = true;
    spec.out = ChildStream::null();
    processes_.push_back({ChildProcess(spec), std::nullopt});
  }
  if (!processes_.empty()) watcher_ = std::thread([this] { watch(); });
}

ProfileProcesses::~ProfileProcesses() {
  stop_.store(true);
  if (watcher_.joinable()) watcher_.join();
  kill_all();
}

void ProfileProcesses::wait_all(double timeout_s) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(timeout_s * 1000));
  while (true) {
    {
      const std::lock_guard lock(mutex_);
      const auto running = std::find_if(processes_.begin(), processes_.end(),
                                        [](const Process& p) { return !p.exit; });
      if (running == processes_.end()) return;
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error(name(running - processes_.begin()) + " still runs after " +
                                 std::to_string(static_cast<int>(timeout_s)) + " s");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ProfileProcesses::watch() {
  while (!stop_.load()) {
    {
      const std::lock_guard lock(mutex_);
      for (size_t i = 0; i < processes_.size(); ++i) {
        Process& p = processes_[i];
        if (p.exit || !(p.exit = p.child.poll())) continue;
        if (p.exit->succeeded()) continue;
        fail(name(i) + " failed (" +
             (p.exit->signal != 0 ? "signal " + std::to_string(p.exit->signal)
                                  : "exit status " + std::to_string(p.exit->code)) +
             ")");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void ProfileProcesses::kill_all() {
  for (auto& p : processes_) {
    if (!p.exit) p.exit = p.child.kill();
  }
}

void ProfileProcesses::fail(const std::string& why) {
  std::fprintf(stderr, "error: %s; stopped the profile\n", why.c_str());
  kill_all();
  if (cleanup_) cleanup_();
  std::fflush(nullptr);
  std::_Exit(1);
}

std::string ProfileProcesses::name(size_t i) const {
  return i < names_.size() ? names_[i] : "profile process " + std::to_string(i + 1);
}

}  // namespace harness
