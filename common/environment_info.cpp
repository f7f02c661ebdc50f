#include "common/environment_info.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/utc_time.h"

#ifndef HARNESS_SOURCE_DIR
#define HARNESS_SOURCE_DIR "."
#endif
#ifndef HARNESS_VERSION
#define HARNESS_VERSION "0.0.0"
#endif

namespace harness {
namespace {

std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 256> buffer{};
    while (fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

std::string harness_git_revision() {
  const std::string git = "git -C '" + std::string(HARNESS_SOURCE_DIR) + "' ";
  std::string revision = command_output(git + "rev-parse HEAD 2>/dev/null");
  if (revision.empty()) return "unknown";
  if (!command_output(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) {
    revision += "-dirty";
  }
  return revision;
}

nlohmann::json machine_identity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return {{"hostname", host},
          {"cpu_model", cpu_model()},
          {"logical_cores", std::thread::hardware_concurrency()}};
}

nlohmann::json collect_environment(const std::map<std::string, std::string>& extra) {
  nlohmann::json env = machine_identity();
  env["harness_version"] = HARNESS_VERSION;
  env["harness_git_revision"] = harness_git_revision();
  env["compiler"] = std::string("g++ ") + __VERSION__;
  env["started_utc"] = utc_timestamp_compact();
  for (const auto& [key, value] : extra) env[key] = value;
  return env;
}

double physical_memory_bytes() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

long long peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // kB
  }
  return 0;
}

}  // namespace harness
